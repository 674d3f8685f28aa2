"""Forgeries of a verdict (issue 23), graded through the verifier (the default; ``JAXPLAY_VERIFIER=0`` turns
it off): each ends in its honest verdict, because the numbers, the program the checks read and the probes
come from the verifier's rebuild of the traced program, not from the learner's process.

Each file in ``tests/forgeries/`` says what it does and the verdict it must get (``# expect: ...``).
"""
from __future__ import annotations

from pathlib import Path

import hashlib
import json
import os
import subprocess
import sys

import pytest

import problems
from grader.grading import source_policy
from grader.grading.grade import grade
from grader.verifier import service
from grader.grading.workers import worker_pool

FORGERIES = sorted((Path(__file__).resolve().parent / "forgeries").glob("*.py"))


HEAD_KEYS = ("problem", "expect", "mode")


def _head(path: Path) -> dict[str, str]:
    """The file's ``# problem:``, ``# expect:`` and ``# mode:`` lines (``mode: submit`` grades the hidden
    cases too; Run by default)."""
    head = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        if key.strip() in HEAD_KEYS:
            head[key.strip()] = value.strip()
    return head


@pytest.fixture(scope="module")
def pool():
    with worker_pool(size=1, warm=1, warm_up=False) as workers:
        yield workers


@pytest.fixture
def verifier_on(monkeypatch):
    """The verifier on, and the source policy off: every forgery here reaches into the grader's frames, its
    payload or the garbage collector, which the policy refuses before anything runs (see the last test); the
    verdicts below are what holds when a payload gets past that first layer."""
    monkeypatch.setattr(service, "ENABLED", True)
    monkeypatch.setattr(source_policy, "ENABLED", False)


@pytest.mark.parametrize("path", FORGERIES, ids=[p.stem for p in FORGERIES])
def test_a_forgery_gets_its_honest_verdict(path, pool, verifier_on):
    head = _head(path)
    problem = problems.get(head["problem"])
    report = grade(problem, path.read_text(), examples_only=head.get("mode") != "submit", run=pool.run)
    assert report.verdict.value == head["expect"], (report.message, [(c.name, c.message) for c in report.cases],
                                                    [(r.id, r.passed, r.message) for r in report.requirements])


def test_a_learner_pytree_class_is_told_to_return_plain_containers(pool, verifier_on):
    report = grade(problems.get("gradient-accumulation-with-scan"), (FORGERIES[0].parent / "unflatten_swap.py").read_text(),
                   examples_only=True, run=pool.run)
    assert "return dicts, lists or tuples" in report.cases[0].message


def test_the_reference_and_a_wrong_answer_through_the_verifier(pool, verifier_on):
    """The verifier's path grades honestly both ways (so the verdicts above are not a verifier that fails all)."""
    problem = problems.get("gradient-accumulation-with-scan")
    assert grade(problem, problem.reference, examples_only=True, run=pool.run).verdict.value == "accepted"
    wrong = problem.folder / "submissions" / "wrong_answer" / "sums_instead_of_averaging.py"
    assert grade(problem, wrong.read_text(), examples_only=True, run=pool.run).verdict.value == "wrong_answer"


def test_the_verifier_is_the_default_and_0_turns_it_off():
    env = {k: v for k, v in os.environ.items() if k != "JAXPLAY_VERIFIER"}
    ask = [sys.executable, "-c", "from grader.verifier import service; print(service.ENABLED)"]
    root = str(Path(__file__).resolve().parents[1])
    assert subprocess.run(ask, env=env, cwd=root, capture_output=True, text=True).stdout.strip() == "True"
    off = subprocess.run(ask, env=env | {"JAXPLAY_VERIFIER": "0"}, cwd=root, capture_output=True, text=True)
    assert off.stdout.strip() == "False"


MEMORY_HOG = """
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    big = jnp.ones((3 << 28,), jnp.float32) * x.sum()  # 3 GiB of touched pages, made where the program runs
    return {"loss": jnp.sort(big)[0], "grads": params}
"""


@pytest.mark.slow
def test_the_verifier_keeps_the_child_s_memory_limit(pool, verifier_on):
    """The child only traces, so a program's arrays are made in the verifier's process: the sandbox's limit on
    a run's resident memory holds there too (a memory limit, and the helper is replaced)."""
    report = grade(problems.get("gradient-accumulation-with-scan"), MEMORY_HOG, examples_only=True, run=pool.run)
    assert report.verdict.value == "memory_limit", (report.verdict, report.message)
    problem = problems.get("gradient-accumulation-with-scan")
    assert grade(problem, problem.reference, examples_only=True, run=pool.run).verdict.value == "accepted"


@pytest.mark.parametrize("name", ["unflatten_swap", "perfect_report_then_exit", "pallas_block_table_forged"])
def test_without_the_verifier_these_forgeries_are_accepted(name, pool, monkeypatch):
    """What the verifier is for: graded by the child alone (``JAXPLAY_VERIFIER=0``), these forged numbers and
    programs are taken as right on every example (two of them still fail their requirement rows there for want
    of the verifier's experiments; the forged kernel table passes its grid row)."""
    monkeypatch.setattr(service, "ENABLED", False)
    monkeypatch.setattr(source_policy, "ENABLED", False)
    path = FORGERIES[0].parent / f"{name}.py"
    report = grade(problems.get(_head(path)["problem"]), path.read_text(), examples_only=True, run=pool.run)
    assert report.cases and all(c.passed for c in report.cases), (report.message, [c.message for c in report.cases])
    assert report.verdict.value in ("accepted", "requirements_not_met"), report.message


@pytest.mark.parametrize("path", FORGERIES, ids=[p.stem for p in FORGERIES])
def test_with_the_source_policy_on_a_forgery_is_refused_before_it_runs(path):
    """The first layer (``grader/grading/source_policy.py``): each forgery is a Runtime Error naming its line,
    and nothing is run."""
    ran = []
    report = grade(problems.get(_head(path)["problem"]), path.read_text(), examples_only=True,
                   run=lambda job, limits: ran.append(job))
    assert not ran and report.verdict.value == "runtime_error", report.message
    assert report.message.startswith("Line ") and "refuses" in report.message


MARKED_BY_HAND = [
    ("gradient-accumulation-with-scan", "accepted/hand_written_backward.py"),
    ("hessian-vector-product", "accepted/by_hand.py"),
    ("straight-through-estimator-with-custom-vjp", "accepted/gradient_by_hand.py"),
    ("mixed-precision-with-loss-scaling", "accepted/backward_pass_by_hand.py"),
    ("spectral-norm-by-power-iteration", "accepted/gradient_by_hand.py"),
    ("per-example-gradient-clipping", "accepted/hand_written_gradients.py"),
]
"""A gallery file per problem whose derivative is written out by hand: accepted, because the rows read what the
program computes (each step's gradient, the scaled products, no loop run in reverse...), not how it was made."""

UNMET_MARKED = [
    ("gradient-accumulation-with-scan", "fails/grad-inside-scan/sufficient_statistics_for_the_second_layer.py"),
    ("mixed-precision-with-loss-scaling", "fails/scale-inside-grad/update_from_a_second_unscaled_backward.py"),
    ("spectral-norm-by-power-iteration", "fails/stop-gradient/grad_through_loop_then_corrected.py"),
    ("per-example-gradient-clipping", "fails/batched-per-example-grads/python_loop.py"),
    ("hessian-vector-product", "fails/no-dense-hessian/discarded_hessian.py"),
]
"""A gallery file per problem that lacks the structure a row asks for: marks claiming it change nothing."""

NAME_STACK_MARKS = """

from jax._src import source_info_util as _siu


def _marked(f):
    def marked(*args, **kwargs):
        with _siu.transform_name_stack("jvp"), _siu.transform_name_stack("transpose"), \\
                _siu.transform_name_stack("jvp"):
            return f(*args, **kwargs)
    return marked


{entry} = _marked({entry})
"""
ENCODER_MARKS = """

import sys as _sys

_payload = _sys.modules.get("jaxplay_payload")
if _payload is not None:
    _encoder = _payload._COMPANIONS["program"].ProgramEncoder
    _real = _encoder.name_stack
    _encoder.name_stack = staticmethod(lambda ns, _real=_real: [["t", "jvp"], ["t", "transpose"], ["t", "jvp"]]
                                       + _real(ns))
"""


def _marked_gets_its_gallery_verdict(slug: str, name: str, how: str, pool) -> None:
    problem = problems.get(slug)
    path = problem.folder / "submissions" / name
    expected = problems.read_submission(path)
    code = path.read_text()
    code += NAME_STACK_MARKS.format(entry=problem.entry) if how == "name_stack" else ENCODER_MARKS
    report = grade(problem, code, examples_only=True, run=pool.run)
    failed = {r.id: r.message for r in report.requirements if not r.passed and not r.advice}
    assert report.verdict.value == expected.expect and sorted(failed) == sorted(expected.fails), \
        (report.message, failed)


@pytest.mark.parametrize("how", ["name_stack", "encoder"])
@pytest.mark.parametrize("slug,name", MARKED_BY_HAND, ids=[m[0] for m in MARKED_BY_HAND])
def test_autodiff_marks_the_submission_writes_decide_nothing(slug, name, how, pool, verifier_on):
    """The derivative written by hand, every equation marked as forward-over-reverse autodiff makes it
    (`jvp(transpose(jvp(...)))`): by JAX's own name-stack context in the submission, or by patching the
    payload's program encoder. The verdict is the unmarked file's (the gallery's), row by row."""
    _marked_gets_its_gallery_verdict(slug, name, how, pool)


@pytest.mark.parametrize("slug,name", UNMET_MARKED, ids=[m[0] for m in UNMET_MARKED])
def test_autodiff_marks_do_not_meet_a_requirement(slug, name, pool, verifier_on):
    """A program that lacks the structure, marked as autodiff would mark it: the row still fails."""
    _marked_gets_its_gallery_verdict(slug, name, "name_stack", pool)


def test_the_lookup_table_is_right_wherever_the_values_are_in_the_heap(pool, verifier_on):
    """The control for ``heap_lookup_table``: on Run, whose examples are public and sent with their values,
    the table answers every case; so its Submit verdict (wrong_answer, above) is the hidden values' absence."""
    problem = problems.get("exponential-moving-average-with-scan")
    report = grade(problem, (FORGERIES[0].parent / "heap_lookup_table.py").read_text(), examples_only=True,
                   run=pool.run)
    assert report.cases and all(c.passed for c in report.cases), [(c.name, c.message) for c in report.cases]
    wrong = grade(problem, (FORGERIES[0].parent / "heap_lookup_table.py").read_text(), run=pool.run)
    assert [c.passed for c in wrong.cases if c.hidden] == [False] * len(problem.hidden), wrong.message


HEAP_WALK = """
import gc
import hashlib
import json

SEEN = set()
for obj in gc.get_objects():
    rows = obj if isinstance(obj, list) else [obj] if isinstance(obj, dict) else []
    for row in rows:
        if isinstance(row, list) and len(row) >= 2 and all(type(v) in (int, float) for v in row):
            SEEN.add(hashlib.sha256(json.dumps(row).encode()).hexdigest())
print("FOUND", len(SEEN))
for digest in DIGESTS:
    if digest in SEEN:
        print("HIDDEN", digest)


def ema(x, init, decay):
    import jax

    def step(a, row):
        a = decay * a + (1.0 - decay) * row
        return a, a
    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
"""


@pytest.mark.parametrize("verify", [True, False], ids=["verifier", "verifier-off"])
def test_no_hidden_value_is_anywhere_in_the_child_s_heap(pool, monkeypatch, verify):
    """A submission that walks every object in its process at import, and prints which hidden inputs it
    finds as text (each hidden case's first row, as JSON would write it): none, through the verifier or
    without it. With the verifier off, Submit runs the examples and says why the hidden cases were not run."""
    monkeypatch.setattr(service, "ENABLED", verify)
    monkeypatch.setattr(source_policy, "ENABLED", False)  # the heap walk imports gc: the layers behind the policy
    problem = problems.get("exponential-moving-average-with-scan")
    digest = lambda case: hashlib.sha256(json.dumps(case.inputs["x"][0]).encode()).hexdigest()  # noqa: E731
    rows = {c.name: digest(c) for c in problem.hidden if len(c.inputs["x"][0]) >= 2}
    shown = {c.name: digest(c) for c in problem.examples if len(c.inputs["x"][0]) >= 2}
    assert rows and shown
    code = HEAP_WALK.replace("DIGESTS", repr(list(rows.values()) + list(shown.values())))
    report = grade(problem, code, run=pool.run)
    found = [line.split(" ", 1)[1] for line in report.stdout.splitlines() if line.startswith("HIDDEN ")]
    assert "FOUND" in report.stdout and set(shown.values()) <= set(found), report.stdout[:2000]  # the walk works
    assert not set(found) & (set(rows.values()) - set(shown.values())), found
    if verify:
        assert report.verdict.value == "accepted", report.message
    else:
        assert report.verdict.value == "internal_error" and "JAXPLAY_VERIFIER=0" in report.message, report.message
        assert all(c.passed for c in report.cases if not c.hidden)
        assert all("verifier" in c.message for c in report.cases if c.hidden)
