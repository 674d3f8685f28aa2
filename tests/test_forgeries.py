"""Forgeries of a verdict (issue 23), graded through the verifier (the default; ``JAXPLAY_VERIFIER=0`` turns
it off): each ends in its honest verdict, because the numbers, the program the checks read and the probes
come from the verifier's rebuild of the traced program, not from the learner's process.

Each file in ``tests/forgeries/`` says what it does and the verdict it must get (``# expect: ...``).
"""
from __future__ import annotations

from pathlib import Path

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


def _head(path: Path) -> dict[str, str]:
    lines = path.read_text().splitlines()[:2]
    return {k.strip("# "): v.strip() for k, v in (line.split(":", 1) for line in lines)}


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
    report = grade(problem, path.read_text(), examples_only=True, run=pool.run)
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


def test_the_verifier_keeps_the_child_s_memory_limit(pool, verifier_on):
    """The child only traces, so a program's arrays are made in the verifier's process: the sandbox's limit on
    a run's resident memory holds there too (a memory limit, and the helper is replaced)."""
    report = grade(problems.get("gradient-accumulation-with-scan"), MEMORY_HOG, examples_only=True, run=pool.run)
    assert report.verdict.value == "memory_limit", (report.verdict, report.message)
    problem = problems.get("gradient-accumulation-with-scan")
    assert grade(problem, problem.reference, examples_only=True, run=pool.run).verdict.value == "accepted"


@pytest.mark.parametrize("name", ["unflatten_swap", "perfect_report_then_exit"])
def test_without_the_verifier_these_forgeries_are_accepted(name, pool, monkeypatch):
    """What the verifier is for: graded by the child alone (``JAXPLAY_VERIFIER=0``), these two are accepted."""
    monkeypatch.setattr(service, "ENABLED", False)
    monkeypatch.setattr(source_policy, "ENABLED", False)
    path = FORGERIES[0].parent / f"{name}.py"
    report = grade(problems.get(_head(path)["problem"]), path.read_text(), examples_only=True, run=pool.run)
    assert report.verdict.value == "accepted", report.message


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
    ("gradient-accumulation-with-scan", "fails/grad-inside-scan/hand_written_backward.py", "grad-inside-scan"),
    ("hessian-vector-product", "fails/forward-over-reverse/by_hand.py", "forward-over-reverse"),
    ("straight-through-estimator-with-custom-vjp", "fails/grad-by-autodiff/gradient_by_hand.py", "grad-by-autodiff"),
    ("mixed-precision-with-loss-scaling", "fails/scale-inside-grad/backward_pass_by_hand.py", "scale-inside-grad"),
    ("spectral-norm-by-power-iteration", "fails/stop-gradient/gradient_by_hand.py", "stop-gradient"),
    ("per-example-gradient-clipping", "fails/batched-per-example-grads/hand_written_gradients.py",
     "batched-per-example-grads"),
]
"""A gallery file per requirement that once read autodiff's marks off the program: its derivative written out
by hand, so that requirement (and only it) fails."""

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


@pytest.mark.parametrize("how", ["name_stack", "encoder"])
@pytest.mark.parametrize("slug,name,row", MARKED_BY_HAND, ids=[m[0] for m in MARKED_BY_HAND])
def test_autodiff_marks_the_submission_writes_decide_nothing(slug, name, row, how, pool, verifier_on):
    """The derivative written by hand, every equation marked as forward-over-reverse autodiff makes it
    (`jvp(transpose(jvp(...)))`): by JAX's own name-stack context in the submission, or by patching the
    payload's program encoder. The row still fails: whether autodiff was called is read from the source."""
    problem = problems.get(slug)
    code = (problem.folder / "submissions" / name).read_text()
    code += NAME_STACK_MARKS.format(entry=problem.entry) if how == "name_stack" else ENCODER_MARKS
    report = grade(problem, code, examples_only=True, run=pool.run)
    failed = {r.id: r.message for r in report.requirements if not r.passed}
    assert report.verdict.value == "requirements_not_met" and row in failed, (report.message, failed)
    assert "read from your source" in failed[row] or "source" in failed[row], failed[row]
