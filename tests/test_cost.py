"""What a structure buys, measured (issue 14): XLA's memory and cost analyses and JAX's saved residuals of
programs compiled at a declared size, never run there. Small sizes here; the realistic ones are declared in
each problem's insight.toml and measured by benchmarks/cost.py."""
import importlib.util
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import problems
from grader.cost.measure import measure_cost
from grader.cost.charts import chart_data
from grader.grading.grade import grade
from grader.grading.workers import worker_pool
from grader.records import Verdict

ROOT = Path(__file__).resolve().parents[1]
GA = problems.get("gradient-accumulation-with-scan")
REMAT = problems.get("rematerialized-mlp-block")
WITH_INSIGHT = [slug for slug, p in problems.registry().items() if p.insight is not None]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


GA_SWEEP = [1, 2, 4, 8, 16]


@pytest.fixture(scope="module")
def ga_report():
    return measure_cost(GA, GA.reference, small=True, sweep_values=GA_SWEEP)


@pytest.fixture(scope="module")
def remat_report():
    return measure_cost(REMAT, REMAT.reference, small=True)


@pytest.fixture(scope="module")
def cost_child():
    """``grader/learner/cost_child.py`` and the child's helpers, in this process (JAX imported here)."""
    spec = importlib.util.spec_from_file_location("jaxplay_child_for_tests", ROOT / "grader" / "learner" / "child.py")
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    t = child.start_jax()
    return t, child


# ----------------------------------------------------------------------------------------------------
# The two seeds' effects, as XLA and JAX report them

def test_gradient_accumulation_temporaries_fall_with_microbatches_and_the_full_batch_stays_on_top(ga_report):
    assert ga_report.ok, ga_report.error
    reference = [p for p in ga_report.programs if p.program == "reference" and p.at]
    temps = [p.temp_bytes for p in sorted(reference, key=lambda p: p.at["num_microbatches"])]
    assert [p.at["num_microbatches"] for p in sorted(reference, key=lambda p: p.at["num_microbatches"])] == \
        [1, 2, 4, 8, 16]
    assert all(a > b for a, b in zip(temps, temps[1:])), temps  # strictly falling, from XLA's memory analysis
    assert temps[-1] < temps[0] / 4
    baseline = ga_report.program("baseline")
    assert baseline.ok and baseline.temp_bytes >= max(temps)
    # the learner's file here is the reference: the same figures, measured in the learner's own job
    assert [p.temp_bytes for p in ga_report.programs if p.program == "learner" and p.at] == \
        [p.temp_bytes for p in ga_report.programs if p.program == "reference" and p.at]


def test_flops_count_every_step_of_the_loop_while_xla_counts_its_body_once(ga_report):
    points = sorted((p for p in ga_report.programs if p.program == "reference" and p.at),
                    key=lambda p: p.at["num_microbatches"])
    one, many = points[0], points[-1]
    n = many.at["num_microbatches"]
    assert abs(many.flops - one.flops) / one.flops < 0.05  # the same work, however it is split
    assert many.flops_xla < one.flops_xla / (n / 2)          # XLA's own count: one body of n
    assert any(loop["trip_count"] == n for loop in many.loops)


def test_remat_reference_saves_fewer_residual_bytes_than_without_checkpoint(remat_report):
    assert remat_report.ok, remat_report.error
    saved = {p.label: p.residual_bytes for p in remat_report.programs}
    assert saved["reference"] < saved["baseline"]
    assert saved["nothing_saveable"] < saved["reference"]
    assert remat_report.program("reference").checkpointed and not remat_report.program("baseline").checkpointed
    tanh = [r for r in remat_report.program("baseline").residuals if r.primitive == "tanh"]
    assert tanh and tanh[0].line is not None and "tanh" in tanh[0].code  # points at the code that made it
    dot = [r for r in remat_report.program("learner").residuals if r.primitive == "dot_general"]
    assert dot and dot[0].shape == [64, 128]  # dots_saveable keeps the B x H product


def test_residuals_found_in_the_traced_program_are_what_jax_lists_for_the_differentiated_function(remat_report):
    """The learner's function calls grad itself; the residuals read by its backward pass, found in its traced
    program, are exactly those ``saved_residuals`` lists for the loss it differentiates."""
    import jax
    import jax.numpy as jnp
    from jax._src.ad_checkpoint import saved_residuals
    sizes = REMAT.insight.sizes_for(small=True)
    B, D, H = sizes["B"], sizes["D"], sizes["H"]
    params = {"w1": np.ones((D, H), np.float32), "b1": np.ones(H, np.float32), "w2": np.ones((H, D), np.float32),
              "b2": np.ones(D, np.float32)}
    x = np.ones((B, D), np.float32)

    def block(p, x):
        return x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    policies = {"baseline": None, "reference": jax.checkpoint_policies.dots_saveable,
                "nothing_saveable": jax.checkpoint_policies.nothing_saveable}
    for label, policy in policies.items():
        f = block if policy is None else jax.checkpoint(block, policy=policy)
        listed = saved_residuals(lambda p: jnp.mean((f(p, x) - x) ** 2), params)
        expected = sum(int(np.prod(aval.shape)) * aval.dtype.itemsize for aval, _ in listed)
        assert remat_report.program(label).residual_bytes == expected, label


def test_residuals_inside_a_scan_body_are_one_steps_and_named(cost_child):
    t, child = cost_child
    import jax
    cc = t["cost"]
    code = GA.reference
    fn, error = cc.load_entry(code, "solution.py", GA.entry, vars(child))
    assert error is None
    shapes = GA.insight.shapes_at(GA.insight.sizes_for(small=True, M=4))
    specs = [{"name": a.name, "kind": a.kind, "static": a.static} for a in GA.args]
    closed = jax.jit(fn, static_argnums=(3,)).trace(*cc.abstract_args(t, specs, shapes)).jaxpr
    found = cc.residual_figures(t, vars(child), closed, "solution.py", cc.leaf_names(specs, shapes))
    assert found["has_backward"]
    rows = 512 // 4
    by_name = {r["name"]: r for r in found["residuals"]}
    assert by_name["output of tanh"]["shape"] == [rows, 64] and "per step" in by_name["output of tanh"]["scope"]
    assert "params['w2']" in by_name
    assert any(name.endswith("(one step's slice)") for name in by_name)


# ----------------------------------------------------------------------------------------------------
# Counting loops: XLA's HloCostAnalysis visits a while body once

def _compiled(fn, *shapes):
    import jax
    import jax.numpy as jnp
    return jax.jit(fn).lower(*(jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes)).compile()


def test_loop_corrected_flops_match_the_unrolled_program(cost_child):
    t, _ = cost_child
    import jax
    import jax.numpy as jnp

    def body(c, r):
        return c + jnp.tanh(r @ r.T).sum(), None

    def looped(x):
        return jax.lax.scan(body, 0.0, x)[0]

    def unrolled(x):
        return jax.lax.scan(body, 0.0, x, unroll=True)[0]

    for n in (2, 8, 32):
        scan = t["cost"].loop_corrected_costs(t, _compiled(looped, (n, 16, 32)))
        flat = t["cost"].loop_corrected_costs(t, _compiled(unrolled, (n, 16, 32)))
        assert not flat["loops"] and flat["flops"] == flat["flops_xla"]
        assert scan["loops"][0]["trip_count"] == n
        assert abs(scan["flops"] - flat["flops"]) / flat["flops"] < 0.01, (n, scan, flat)
        assert scan["flops_xla"] < flat["flops"] / (n / 2)  # what XLA alone reports
        assert abs(scan["transcendentals"] - flat["transcendentals"]) <= 1


def test_nested_loops_multiply_their_trip_counts(cost_child):
    t, _ = cost_child
    import jax
    import jax.numpy as jnp

    def inner(c, s):
        return c + jnp.tanh(s @ s.T).sum(), None

    def nested(x):
        def outer(c, r):
            return c + jax.lax.scan(inner, 0.0, r.reshape(4, 4, 32))[0], None
        return jax.lax.scan(outer, 0.0, x)[0]

    def flat(x):
        return jnp.sum(jnp.tanh(jnp.einsum("abij,abkj->abik", x.reshape(8, 4, 4, 32), x.reshape(8, 4, 4, 32))))

    got = t["cost"].loop_corrected_costs(t, _compiled(nested, (8, 16, 32)))
    reference = t["cost"].loop_corrected_costs(t, _compiled(flat, (8, 16, 32)))
    dots = 8 * 4 * 2 * 4 * 4 * 32  # only to bound the check: the figures themselves come from XLA
    assert sorted(loop["trip_count"] for loop in got["loops"]) == [4, 8]
    assert got["flops"] >= dots and abs(got["flops"] - reference["flops"]) / reference["flops"] < 0.1
    assert got["flops_xla"] < got["flops"] / 16


# ----------------------------------------------------------------------------------------------------
# Errors and the command line

def test_a_submission_that_fails_at_the_declared_size_gets_a_clear_json_error(tmp_path):
    bad = tmp_path / "fixed_rows.py"
    bad.write_text(GA.reference.replace("x.reshape(num_microbatches, -1, x.shape[1])",
                                        "x.reshape(num_microbatches, 2, x.shape[1])"))
    res = cli("cost", GA.slug, str(bad), "--json", "--small", "--sweep", "4")
    assert res.returncode == 1, res.stderr
    report = json.loads(res.stdout)
    assert report["ok"] is False and report["error_kind"] == "learner"
    assert "could not be traced and compiled at the declared size" in report["error"]
    assert "x (512, 64)" in report["error"] and "reshape" in report["error"].lower()
    assert "fixed_rows.py" not in report["traceback"] and "solution.py" in report["traceback"]
    learner = next(p for p in report["programs"] if p["label"] == "learner")
    assert learner["ok"] is False and learner["temp_bytes"] is None
    assert next(p for p in report["programs"] if p["label"] == "reference")["ok"] is True


def test_a_syntax_error_is_the_submissions_fault_not_a_crash(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def grad_accumulation(params, x, y, num_microbatches)\n    return 1\n")
    report = measure_cost(GA, bad.read_text(), small=True, sweep_values=GA_SWEEP)  # the problem's figures: cached
    assert not report.ok and report.error_kind == "submission" and "line 1" in report.error
    assert report.program("reference").ok  # the problem's own figures still come back


@pytest.mark.slow
def test_cli_json_contract(tmp_path):
    res = cli("cost", REMAT.slug, str(ROOT / "problems" / REMAT.slug / "reference.py"), "--json", "--small")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert {"problem", "file", "size", "programs"} <= set(report)
    assert report["problem"] == REMAT.slug and report["size"] == REMAT.insight.sizes_for(small=True)
    assert report["file"].endswith("reference.py")
    labels = [p["label"] for p in report["programs"]]
    assert labels[:3] == ["learner", "reference", "baseline"]
    for p in report["programs"]:
        assert {"label", "temp_bytes", "argument_bytes", "output_bytes", "flops", "residual_bytes"} <= set(p)
        assert isinstance(p["temp_bytes"], int) and isinstance(p["flops"], float)

    res = cli("cost", GA.slug, str(ROOT / "problems" / GA.slug / "reference.py"), "--json", "--small",
              "--sweep", "1,4", "--size", "B=64")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    labels = [p["label"] for p in report["programs"]]
    assert report["size"]["B"] == 64 and report["shapes"]["x"] == [64, 64]
    assert {"learner", "reference", "baseline", "learner@num_microbatches=4"} <= set(labels)
    assert [s["label"] for s in report["sweep"]] == ["learner@num_microbatches=1", "learner@num_microbatches=4"]
    assert all({"num_microbatches", "label", "temp_bytes"} <= set(s) for s in report["sweep"])
    assert not any("residual_bytes" in p for p in report["programs"])  # nothing checkpointed here


@pytest.mark.slow
def test_cli_text_is_readable_and_usage_errors_exit_2(tmp_path):
    res = cli("cost", REMAT.slug, str(ROOT / "problems" / REMAT.slug / "reference.py"), "--small")
    assert res.returncode == 0, res.stderr
    assert "saved for the backward pass by baseline (no checkpoint)" in res.stdout
    assert "output of tanh" in res.stdout and REMAT.insight.charts[0].takeaway in res.stdout
    assert "XLA's figures for this server's CPU" in res.stdout
    straight = "straight-through-estimator-with-custom-vjp"
    res = cli("cost", straight, str(ROOT / "problems" / straight / "reference.py"))
    assert res.returncode == 2 and "declares no insight" in res.stderr and GA.slug in res.stderr
    assert cli("cost", "no-such-problem", "x.py").returncode == 2
    assert cli("cost", GA.slug, str(tmp_path / "nope.py")).returncode == 2


# ----------------------------------------------------------------------------------------------------
# Every declared insight, at its small size

@pytest.mark.slow
@pytest.mark.parametrize("slug", WITH_INSIGHT)
def test_every_insight_measures_its_reference_and_baseline(slug):
    problem = problems.get(slug)
    sweep = problem.insight.sweep
    values = sweep.points(problem.insight.sizes_for(small=True), small=True)[:1] if sweep else None  # one: fast
    report = measure_cost(problem, problem.reference, small=True, sweep_values=values)
    assert report.ok, report.error
    assert all(p.ok for p in report.programs), [(p.label, p.error) for p in report.programs if not p.ok]
    for learner in (p for p in report.programs if p.program == "learner"):
        twin = report.program(learner.label.replace("learner", "reference", 1))
        assert (learner.temp_bytes, learner.flops, learner.hlo_instructions) == \
            (twin.temp_bytes, twin.flops, twin.hlo_instructions), learner.label
    charts = chart_data(report.to_json())
    assert len(charts) == len(problem.insight.charts_for("cpu")) and all(c.rows and not c.missing for c in charts)


# ----------------------------------------------------------------------------------------------------
# An ordinary pool job: a measurement never holds up a Run beyond the queue

@pytest.mark.slow
def test_a_measurement_on_the_pool_does_not_hold_up_a_run():
    pool = worker_pool(size=1, warm=1, long_after_s=1.0)
    got = {}

    # the learner's job outlasts any Run however fast the other jobs are (it sleeps as it loads)
    slow = "import time\ntime.sleep(8)\n" + GA.reference

    def measure():
        got["report"] = measure_cost(GA, slow, small=True, sweep_values=[1, 2, 4, 8], run=pool.run, cache=False)

    try:
        measuring = threading.Thread(target=measure)
        measuring.start()
        deadline = time.monotonic() + 120
        while pool.stats().long_running == 0 and measuring.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert measuring.is_alive() and pool.stats().long_running == 1
        report = grade(GA, GA.reference, examples_only=True, run=pool.run)
        assert report.verdict is Verdict.ACCEPTED, report.message
        assert measuring.is_alive()  # the Run got its verdict while the measurement went on
        measuring.join(timeout=300)
    finally:
        pool.shutdown()
    assert got["report"].ok, got["report"].error
    assert [j["job"] for j in got["report"].jobs] == ["trusted", "learner"]


# ----------------------------------------------------------------------------------------------------
# Chart data for the Cost tab (no JAX, no Streamlit)

def _program(label, program, title, at=None, **figures):
    base = {"label": label, "program": program, "title": title, "at": at or {}, "ok": True, "error": ""}
    return {**base, **figures}


def test_chart_data_draws_each_program_against_the_sweep_with_units():
    report = {
        "sweep_name": "num_microbatches",
        "charts": [{"metric": "temp_bytes", "over": "sweep", "title": "Temporary memory", "takeaway": "falls"}],
        "programs": [
            _program("learner", "learner", "your code", temp_bytes=6 << 20),
            _program("reference", "reference", "reference", temp_bytes=6 << 20),
            _program("baseline", "baseline", "full batch", temp_bytes=17 << 20),
            _program("learner@num_microbatches=1", "learner", "your code", {"num_microbatches": 1}, temp_bytes=16 << 20),
            _program("learner@num_microbatches=4", "learner", "your code", {"num_microbatches": 4}, temp_bytes=6 << 20),
            _program("reference@num_microbatches=1", "reference", "reference", {"num_microbatches": 1},
                     temp_bytes=16 << 20),
            {**_program("reference@num_microbatches=4", "reference", "reference", {"num_microbatches": 4}),
             "ok": False, "error": "boom"},
        ],
    }
    [chart] = chart_data(report)
    assert chart.kind == "line" and chart.x_label == "num_microbatches" and chart.y_label == "temporary memory (MiB)"
    frame = chart.wide()
    assert list(frame.columns) == ["your code", "reference", "full batch (measured once)"]
    assert list(frame.index) == [1, 4]
    assert frame.loc[1, "your code"] == 16 and frame.loc[4, "full batch (measured once)"] == 17
    assert chart.missing == ["reference@num_microbatches=4: boom"]


def test_chart_data_bars_per_program():
    report = {"sweep_name": "", "charts": [{"metric": "residual_bytes", "over": "programs", "title": "Saved",
                                            "takeaway": "less"}],
              "programs": [_program("learner", "learner", "your code", residual_bytes=66048),
                           _program("baseline", "baseline", "no checkpoint", residual_bytes=98304)]}
    [chart] = chart_data(report)
    assert chart.kind == "bar" and chart.unit == "KiB"
    assert [(r["x"], r["value"]) for r in chart.rows] == [("your code", 64.5), ("no checkpoint", 96.0)]


def test_every_chart_colours_a_program_by_what_it_is_from_one_palette():
    """Issue 46: a chart coloured its series by their order in it ("your code" pink on the CPU chart, orange on
    the TPU chart). A program's colour is its role's, or its place among the problem's compared programs."""
    from grader.cost.charts import PALETTE, ROLE_COLOURS, series_colour
    def report(*extra):
        return {"sweep_name": "", "charts": [{"metric": "residual_bytes", "over": "programs", "title": "Saved",
                                              "takeaway": "less"}],
                "programs": [_program(*p, residual_bytes=1 << 20) for p in (
                    ("baseline", "baseline", "no checkpoint"), ("nothing", "nothing", "nothing_saveable"), *extra,
                    ("reference", "reference", "dots (reference)"), ("learner", "learner", "your code"))]}
    [cpu] = chart_data(report())
    [tpu] = chart_data(report(("stacked", "stacked", "16 blocks")))
    assert cpu.colours["your code"] == tpu.colours["your code"] == ROLE_COLOURS["learner"] == series_colour("learner")
    assert cpu.colours["dots (reference)"] == tpu.colours["dots (reference)"] == ROLE_COLOURS["reference"]
    assert cpu.colours["no checkpoint"] == ROLE_COLOURS["baseline"]
    assert cpu.colours["nothing_saveable"] == tpu.colours["nothing_saveable"] == PALETTE[0]
    assert tpu.colours["16 blocks"] == PALETTE[1]
    assert len(set(tpu.colours.values())) == len(tpu.colours)


def test_one_formatter_writes_every_cost_figure():
    """Issue 46: the kernel table said 0.087 ms where its chart said 0.0872 ms."""
    from grader.grading.numbers import figure
    from pages.views import cost_view
    assert figure(0.08723, "ms") == cost_view._with_unit(0.08723, "ms") == "0.0872 ms"
    assert figure(17.247) == "17.2" and figure(263.99, "MiB") == "264 MiB" and figure(123456) == "123,456"
    assert figure(None) == figure(float("nan")) == ""
    assert cost_view._mib(3 << 20) == "3"


def test_insight_declarations_are_checked(tmp_path):
    import shutil
    folder = tmp_path / "row-sums"
    shutil.copytree(problems.ROOT / "_template", folder)
    assert problems.load_problem(folder).insight.sweep.points({"N": 256}) == [16, 64, 256]
    text = (folder / "insight.toml").read_text()
    (folder / "insight.toml").write_text(text.replace('x = ["N", "M"]', 'x = ["N", "Q"]'))
    with pytest.raises(ValueError, match="not in \\[size\\]"):
        problems.load_problem(folder)
    (folder / "insight.toml").write_text(text.replace('metric = "hlo_instructions"', 'metric = "speed"'))
    with pytest.raises(ValueError, match="metric"):
        problems.load_problem(folder)
    (folder / "insight.toml").unlink()
    assert problems.load_problem(folder).insight is None


def test_a_class_measuring_at_once_starts_one_trusted_job():
    """Thirty learners pressing Cost on a problem nobody measured yet: one job measures the problem's own
    programs, the others wait for its figures (a stand-in runner here: no child, no JAX)."""
    from grader.sandbox import RunOutcome
    jobs = []

    def run(job, limits):
        jobs.append(job)
        time.sleep(0.2)
        programs = [{"label": p["label"], "status": "ok", "temp_bytes": 1, "flops": 1.0} for p in job["programs"]]
        return RunOutcome(result={"status": "ok", "programs": programs})

    threads = [threading.Thread(target=measure_cost, args=(REMAT, "code"), kwargs={"run": run, "small": True,
                                                                                     "sizes": {"B": 3}})
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    trusted = [j for j in jobs if "solution.py" not in j["codes"]]
    assert len(trusted) == 1 and len(jobs) == 9



@pytest.mark.parametrize("kind", ["line", "bar"])
def test_the_cost_tab_draws_line_and_bar_charts(ga_report, kind):
    """The page draws each kind of chart from a real report (a bar chart's index and column names once
    collided with the long form's, and the tab stopped at the chart's title)."""
    import base64
    import pickle

    from streamlit.testing.v1 import AppTest
    report = ga_report if kind == "line" else measure_cost(REMAT, REMAT.reference, small=True)
    kinds = [c.kind for c in chart_data(report.to_json())]
    assert kind in kinds
    blob = base64.b64encode(pickle.dumps(report)).decode()
    at = AppTest.from_string("import base64, pickle\nfrom pages.views.cost_view import draw\n"
                             f"draw(pickle.loads(base64.b64decode({blob!r})))\n", default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("vega_lite_chart")) == len(kinds)

    # Issue 21, item 9: the plot keeps its height (only the width is fitted: Streamlit's default fit squeezed
    # axes, titles and legend into the height and left an 80 px plot), a sweep that doubles reads on a log
    # axis ticked at the measured sizes, and every value is labelled with its unit.
    import json

    import pyarrow as pa
    for chart, element in zip(chart_data(report.to_json()), at.get("vega_lite_chart")):
        spec = json.loads(element.proto.spec)
        assert spec["autosize"]["type"] == "fit-x", spec["autosize"]
        layers = spec.get("layer", [spec])
        encoding = layers[0]["encoding"]
        rows = [r for data in element.proto.datasets  # the data travel as Arrow streams beside the spec
                for r in pa.ipc.open_stream(data.data.data).read_all().to_pylist()]
        if chart.kind == "line":
            assert spec["height"] >= 200
            points = sorted({r["x"] for r in rows})
            if points[-1] >= 8 * points[0]:
                assert encoding["x"]["scale"]["type"] == "log" and encoding["x"]["axis"]["values"] == points
            top = max(r["value"] for r in rows)
            assert encoding["y"]["scale"]["domain"][1] >= top, "the largest value sits inside the axis"
        # Issue 32: the value axis ends near the data (it ran to about twice the largest value), with a few
        # readable ticks (a logarithmic one drew 30 labels at 12 px), in a taller plot
        value = encoding["y" if chart.kind == "line" else "x"]
        top = max(r["value"] for r in rows)
        domain, ticks = value["scale"]["domain"], value["axis"]["values"]
        assert top <= domain[1] <= (1.3 * top if chart.log_scale else 1.5 * top), (domain, top)
        assert 2 <= len(ticks) <= 8 and value["axis"]["labelFontSize"] >= 13, ticks
        assert spec["height"] >= (300 if chart.kind == "line" else 120)
        if chart.kind == "bar":  # each program's value is written beside its name, not past the bar's end
            assert encoding["y"]["field"] == "name" and len(layers) == 1
        if chart.unit:
            assert all(r["label"].endswith(" " + chart.unit) for r in rows if r["value"] == r["value"]), rows[:3]
