"""Cost on a TPU, compiled ahead of time (issue 25): ``python -m grader cost ... --target tpu-v5e``, its JSON,
the targets, the error without the extra, the figures against an independent compile, the sandboxed pool
path and the Cost tab's target choice. Small sizes only (a stacked compile at the realistic size takes a
minute on two busy cores: benchmarks/cost.py measures those). Needs the extra (requirements-tpu.txt; CI
installs it): without it the tests that compile are skipped and the one that checks the error runs."""
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a contributor's quick run (-m "not slow") leaves these out

import problems
from grader.cost.measure import TPU_COST_LIMITS, measure_cost
from grader.cost.targets import TARGETS, tpu_extra
from grader.grading.workers import run_job, worker_pool

ROOT = Path(__file__).resolve().parents[1]
GA = problems.get("gradient-accumulation-with-scan")
REMAT = problems.get("rematerialized-mlp-block")
INSTALLED, WHY = tpu_extra()
needs_tpu = pytest.mark.skipif(not INSTALLED, reason=f"the TPU extra is not installed: {WHY}")

HIDE_LIBTPU = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "libtpu" or name.startswith("libtpu."):
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, Hide())
"""
"""Run first in a subprocess: this Python then has no libtpu, as a machine without the extra."""


def cli(*args, hide_libtpu=False):
    prefix = [sys.executable, "-c", HIDE_LIBTPU + "from grader.cli import main\nsys.exit(main())"] \
        if hide_libtpu else [sys.executable, "-m", "grader"]
    return subprocess.run([*prefix, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


GA_SWEEP = "1,4"


@pytest.fixture(scope="module")
def ga_tpu():
    """The reference of gradient accumulation, small, at two sweep points, through the CLI (sandboxed)."""
    res = cli("cost", GA.slug, str(ROOT / "problems" / GA.slug / "reference.py"), "--json", "--small",
              "--sweep", GA_SWEEP, "--target", "tpu-v5e")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return json.loads(res.stdout)


# ----------------------------------------------------------------------------------------------------
# Without the extra; the targets

def test_without_libtpu_a_tpu_target_is_a_json_error_naming_the_extra_with_exit_status_2():
    path = str(ROOT / "problems" / GA.slug / "reference.py")
    res = cli("cost", GA.slug, path, "--json", "--target", "tpu-v5e", hide_libtpu=True)
    assert res.returncode == 2, res.stderr
    report = json.loads(res.stdout)
    assert list(report)[0] == "target" and report["target"] == "tpu-v5e"
    assert report["ok"] is False and report["error_kind"] == "missing_extra"
    assert "requirements-tpu.txt" in report["error"] and report["extra"] == "requirements-tpu.txt"
    res = cli("cost", GA.slug, path, "--target", "tpu-v5e", hide_libtpu=True)
    assert res.returncode == 2 and "requirements-tpu.txt" in res.stderr
    listed = json.loads(cli("cost", "--targets", "--json", hide_libtpu=True).stdout)["targets"]
    assert [(t["name"], t["available"]) for t in listed][:2] == [("cpu", True), ("tpu-v5e", False)]
    assert cli("cost", GA.slug, path, "--target", "tpu-v9").returncode == 2  # not a target: a usage error


@needs_tpu
def test_targets_are_listed_and_every_tpu_target_compiles_in_the_sandbox():
    listed = json.loads(cli("cost", "--targets", "--json").stdout)["targets"]
    assert [t["name"] for t in listed] == list(TARGETS) and listed[0]["name"] == "cpu"
    assert all(t["available"] for t in listed)
    text = cli("cost", "--targets").stdout
    assert "This machine (CPU)" in text and "TPU v5e, compiled ahead of time" in text
    kinds = {}
    for target in (t for t in TARGETS.values() if t.platform == "tpu"):
        job = {"kind": "cost", "entry": "f", "args": [{"name": "x", "kind": "float32", "dtype": "float32"}],
               "codes": {"p.py": "import jax.numpy as jnp\n\ndef f(x):\n    return jnp.tanh(x @ x.T).sum()\n"},
               "target": target.job(),
               "programs": [{"label": "p", "program": "p", "file": "p.py", "shapes": {"x": [256, 128]}}]}
        outcome = run_job(job, TPU_COST_LIMITS)
        assert outcome.result and outcome.result["status"] == "ok", (target.name, outcome.stderr[-1500:])
        got = outcome.result["programs"][0]
        assert got["status"] == "ok" and got["peak_bytes"] > 0 and got["flops"] > 0, (target.name, got)
        kinds[target.name] = got
    assert len(kinds) == 4


# ----------------------------------------------------------------------------------------------------
# The JSON, and its figures against an independent compile

INDEPENDENT = textwrap.dedent("""
    import importlib.util, json, os, sys
    os.environ.update(ALLOW_MULTIPLE_LIBTPU_LOAD="1", TPU_LOG_DIR="disabled")
    import jax, jax.numpy as jnp
    from jax.experimental import topologies
    path, entry, shapes, points = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    spec = importlib.util.spec_from_file_location("ref", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    device = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2").devices[0]
    on = jax.sharding.SingleDeviceSharding(device)
    S = lambda shape: jax.ShapeDtypeStruct(tuple(shape), jnp.float32, sharding=on)
    params = {k: S(v) for k, v in shapes["params"].items()}
    out = {}
    for m in points:
        compiled = jax.jit(getattr(ref, entry), static_argnums=3).lower(
            params, S(shapes["x"]), S(shapes["y"]), m).compile()
        memory, cost = compiled.memory_analysis(), compiled.cost_analysis()
        out[m] = {"peak_bytes": memory.peak_memory_in_bytes, "temp_bytes": memory.temp_size_in_bytes,
                  "argument_bytes": memory.argument_size_in_bytes, "output_bytes": memory.output_size_in_bytes,
                  "flops_xla": cost["flops"]}
    print(json.dumps(out))
""")


@needs_tpu
def test_the_json_has_the_target_first_and_peak_bytes_beside_the_other_figures(ga_tpu):
    assert list(ga_tpu)[0] == "target" and ga_tpu["target"] == "tpu-v5e" and ga_tpu["ok"], ga_tpu["error"]
    assert "TPU compiler's plan" in ga_tpu["note"] and "no TPU was used" in ga_tpu["note"]
    fields = {"peak_bytes", "temp_bytes", "argument_bytes", "output_bytes", "flops"}
    for p in ga_tpu["programs"]:
        assert p["ok"] and fields <= set(p) and all(isinstance(p[f], (int, float)) for f in fields), p
    assert [s["num_microbatches"] for s in ga_tpu["sweep"]] == [1, 4]
    assert all(fields <= set(s) and s["peak_bytes"] > 0 for s in ga_tpu["sweep"])


@needs_tpu
def test_the_figures_are_an_independent_compiles_of_the_same_function(ga_tpu):
    shapes = GA.insight.shapes_at(GA.insight.sizes_for(small=True))
    done = subprocess.run([sys.executable, "-c", INDEPENDENT, str(ROOT / "problems" / GA.slug / "reference.py"),
                           GA.entry, json.dumps(shapes), json.dumps([1, 4])],
                          capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin",
                                                                           "JAX_PLATFORMS": "cpu"})
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout)
    for m in (1, 4):
        mine = next(p for p in ga_tpu["programs"] if p["label"] == f"reference@num_microbatches={m}")
        for key, value in theirs[str(m)].items():
            assert mine[key] == value, (m, key, mine[key], value)
    # the TPU's compiler records no loop trip counts: the count of every step is inferred from the loop
    # itself, so four microbatches do the full batch's work while XLA's own count visits the body once
    four = next(p for p in ga_tpu["programs"] if p["label"] == "reference@num_microbatches=4")
    assert four["loops"] and all(loop["trip_count"] == 4 for loop in four["loops"]), four["loops"]
    assert abs(four["flops"] - theirs["1"]["flops_xla"]) < 0.01 * theirs["1"]["flops_xla"]
    assert four["flops_xla"] < 0.5 * theirs["1"]["flops_xla"]
    # the peak falls with microbatches (the technique, on the TPU's plan)
    assert theirs["4"]["peak_bytes"] < theirs["1"]["peak_bytes"]


@needs_tpu
def test_remat_one_block_shows_nothing_on_the_tpu_and_the_stack_shows_the_checkpoint():
    res = cli("cost", REMAT.slug, str(ROOT / "problems" / REMAT.slug / "reference.py"), "--json", "--small",
              "--target", "tpu-v5e")
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads(res.stdout)
    peak = {p["label"]: p["peak_bytes"] for p in report["programs"]}
    one = [peak[k] for k in ("learner", "reference", "baseline", "nothing_saveable")]
    assert max(one) - min(one) <= 0.02 * max(one), peak
    assert peak["stacked_none"] > peak["stacked_dots"] > peak["stacked_nothing"], peak
    assert [c["metric"] for c in report["charts"]] == ["peak_bytes"]
    assert "On the TPU: one block shows nothing" in report["summary"]
    cpu = measure_cost(REMAT, REMAT.reference, small=True)  # the stack is the TPU's alone
    assert not any(p.program.startswith("stacked") for p in cpu.programs)
    assert "peak_bytes" not in [c["metric"] for c in cpu.charts]


def test_every_insight_says_what_the_tpu_plan_shows(tmp_path):
    for problem in (p for p in problems.registry().values() if p.insight is not None):
        assert len(problem.insight.tpu_summary) > 40, problem.slug
        assert problem.insight.charts_for("tpu") and problem.insight.charts_for("cpu"), problem.slug
    import shutil
    folder = tmp_path / "row-sums"
    shutil.copytree(problems.ROOT / "_template", folder)
    text = (folder / "insight.toml").read_text()
    (folder / "insight.toml").write_text(text[:text.index("[tpu]")])
    with pytest.raises(ValueError, match="TPU"):  # a new problem cannot leave it out
        problems.load_problem(folder)


# ----------------------------------------------------------------------------------------------------
# The sandboxed pool (a fork server's worker loads libtpu) and the Cost tab

@needs_tpu
def test_a_pool_worker_measures_for_the_tpu_as_the_cli_does(ga_tpu):
    from grader.grading.runners import PoolRunner
    pool, heard = worker_pool(1), []
    try:  # as the Cost tab measures: one job after the other on the pool, the child's progress heard
        runner = PoolRunner(pool, on_progress=heard.append)
        report = measure_cost(GA, GA.reference, small=True, sweep_values=[1, 4], run=runner, target="tpu-v5e",
                              cache=False)
    finally:
        pool.shutdown()
    # each program traced in turn, then compiled side by side, each compile counted with what is left
    assert heard and all(re.fullmatch(r"tracing \S+ \(\d+ of \d+ programs\), then compiling for tpu-v5e|"
                                      r"compiling \d+ programs for tpu-v5e side by side \(0 of \d+ done\)|"
                                      r"compiled \d+ of \d+ programs for tpu-v5e \(\d+ left\)", h) for h in heard), heard
    assert any(h.endswith("(0 left)") for h in heard)
    assert report.ok, report.error
    assert report.target == "tpu-v5e"
    cli_figures = {p["label"]: (p["peak_bytes"], p["flops"]) for p in ga_tpu["programs"]}
    assert {p.label: (p.peak_bytes, p.flops) for p in report.programs} == cli_figures
    assert all(job["limit"] is None for job in report.jobs)
    assert max(job["peak_rss_bytes"] for job in report.jobs) < TPU_COST_LIMITS.memory_bytes / 2


APP = """
import base64, pickle
import streamlit as st
import grader.cost.targets as targets
targets.real_tpu_extra = getattr(targets, "real_tpu_extra", targets.tpu_extra)  # this process keeps the module
targets.tpu_extra = (lambda: (False, "libtpu is not installed")) if {hide} else targets.real_tpu_extra
import problems
from pages.views.cost_view import cost_tab

cost_tab(problems.get({slug!r}))
"""


@needs_tpu
def test_the_cost_tab_offers_the_tpu_where_the_extra_is_installed_and_shows_its_report():
    from streamlit.testing.v1 import AppTest

    from pages.views import cost_view
    at = AppTest.from_string(APP.format(hide=True, slug=REMAT.slug), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert len(at.radio) == 0  # no extra: no choice, this machine

    report = measure_cost(REMAT, REMAT.reference, small=True, target="tpu-v5e")
    assert report.ok, report.error
    at = AppTest.from_string(APP.format(hide=False, slug=REMAT.slug), default_timeout=60)
    at.session_state["cost-reports"] = {cost_view._cache_key(REMAT, REMAT.starter, "tpu-v5e"): report}
    at.run()
    assert not at.exception, at.exception
    choice = at.radio[0]
    assert list(choice.options) == ["This machine (CPU)", "TPU v5e, compiled ahead of time"]  # as shown
    assert choice.value == "cpu" and not any("TPU compiler's plan" in c.value for c in at.caption)
    choice.set_value("tpu-v5e").run()
    assert not at.exception, at.exception
    assert any("TPU compiler's plan" in c.value for c in at.caption)  # the cached TPU report, drawn
    assert any("Peak memory the TPU compiler plans" in m.value for m in at.markdown)
    at.button(key=f"cost-run-{REMAT.slug}").click().run()  # the same code and target: nothing compiles again
    assert not at.exception, at.exception
    assert at.session_state["jaxplay_tasks"]["current"] is None  # no measurement started
    assert not any("Compiling for" in getattr(s, "label", "") for s in at.get("expandable"))
    assert any("TPU compiler's plan" in c.value for c in at.caption)


@needs_tpu
def test_a_program_that_builds_its_own_mesh_gets_every_chip_of_the_slice():
    """The ring builds a mesh of ``jax.devices()`` (``[tpu] all_devices``): compiled across the four chips of
    a v5e 2x2, each chip's figures are for its own row."""
    ring = problems.get("ring-all-reduce-with-ppermute")
    res = cli("cost", ring.slug, str(ROOT / "problems" / ring.slug / "reference.py"), "--json", "--small",
              "--sweep", "4096", "--target", "tpu-v5e")
    assert res.returncode == 0, res.stdout[-1500:] + res.stderr[-1500:]
    report = json.loads(res.stdout)
    assert report["ok"], report["error"]
    n, d = report["shapes"]["x"]
    for p in report["programs"]:
        assert p["ok"] and p["argument_bytes"] == d * 4, p  # one row of the n, float32, on each chip
    peak = {p["label"]: p["peak_bytes"] for p in report["programs"] if not p["at"]}
    assert peak["psum"] < peak["reference"] <= peak["baseline"], peak
