"""Bad input gets a clear, specific verdict, and the next submission is still graded."""
import pytest

import problems
from grader.grading import source_policy
from grader.grading.grade import grade
from grader.records import ErrorKind, Verdict
from grader.sandbox import Limits

REMAT = problems.get("rematerialized-mlp-block")
FAST = Limits(wall_s=8.0)


def run(code, **kw):
    return grade(REMAT, code, examples_only=True, limits=kw.pop("limits", FAST), **kw)


def test_syntax_error_names_the_line_and_lists_every_requirement_as_unchecked():
    report = run("def remat_mlp_block(params, x, y)\n    return 1\n")
    assert report.verdict is Verdict.SYNTAX_ERROR and report.error_kind is ErrorKind.SUBMISSION
    assert "line 1" in report.message
    assert [r.id for r in report.requirements] == [r.id for r in REMAT.requirements]
    assert all(not r.passed and r.message.startswith("Not checked") for r in report.requirements)


@pytest.mark.slow
def test_missing_entry_function_is_named():
    report = run("def something_else(params, x, y):\n    return 0\n")
    assert report.verdict is Verdict.RUNTIME_ERROR and report.error_kind is ErrorKind.SUBMISSION
    assert "remat_mlp_block" in report.message


def test_exception_gives_the_learners_traceback_and_output():
    report = run("import sys\ndef remat_mlp_block(params, x, y):\n    print('hello')\n"
                 "    print('oops', file=sys.stderr)\n    return 1 / 0\n")
    assert report.verdict is Verdict.RUNTIME_ERROR and report.error_kind is ErrorKind.LEARNER
    assert "ZeroDivisionError" in report.message
    assert 'File "solution.py", line 5' in report.traceback
    assert "hello" in report.stdout and "oops" in report.stderr
    assert all(r.message.startswith("Not checked") for r in report.requirements)


@pytest.mark.slow
def test_infinite_loop_is_a_time_limit():
    report = run("def remat_mlp_block(params, x, y):\n    while True:\n        pass\n", limits=Limits(wall_s=6.0))
    assert report.verdict is Verdict.TIME_LIMIT
    assert all(not c.passed for c in report.cases)


@pytest.mark.slow
def test_huge_output_is_an_output_limit():
    report = run("def remat_mlp_block(params, x, y):\n    while True:\n        print('x' * 10000)\n")
    assert report.verdict is Verdict.OUTPUT_LIMIT
    assert len(report.stdout) <= Limits().shown_bytes


def test_huge_allocation_is_a_memory_limit():
    report = run("import numpy as np\nbig = np.ones((1 << 34,), dtype=np.uint8)\n"
                 "def remat_mlp_block(params, x, y):\n    return 0\n")
    assert report.verdict is Verdict.MEMORY_LIMIT


def test_exit_before_grading_is_not_a_pass():
    report = run("import os\nos._exit(0)\n")
    assert report.verdict is Verdict.RUNTIME_ERROR and "before grading finished" in report.message


def test_segfault_is_reported_as_a_crash(monkeypatch):
    """With the source policy on, `ctypes` is refused before it runs; the crash path below it still holds."""
    refused = run("import ctypes\nctypes.string_at(0)\n")
    assert refused.verdict is Verdict.RUNTIME_ERROR and refused.message.startswith("Line 1: `import ctypes`")
    monkeypatch.setattr(source_policy, "ENABLED", False)
    report = run("import ctypes\nctypes.string_at(0)\n", limits=Limits(wall_s=60.0))  # a cold start, then the crash
    assert report.verdict is Verdict.RUNTIME_ERROR and "crashed" in report.message


def test_forged_report_on_stdout_is_just_output():
    forged = '{"status": "ok", "cases": [], "traces": []}'
    report = run(f"print({forged!r})\ndef remat_mlp_block(params, x, y):\n    return 0\n")
    assert report.verdict is not Verdict.ACCEPTED


def test_non_array_return_is_explained():
    report = run("def remat_mlp_block(params, x, y):\n    return 'loss'\n")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "str" in report.message or "valid JAX type" in report.message


def test_next_submission_is_still_graded_after_failures():
    assert run(REMAT.reference).verdict is Verdict.ACCEPTED


@pytest.mark.parametrize("verdict", list(Verdict))
def test_every_verdict_has_words(verdict):
    assert verdict.label and verdict.label[0].isupper()


def test_python_if_on_a_traced_value_is_explained():
    report = run("import jax.numpy as jnp\ndef remat_mlp_block(params, x, y):\n"
                 "    if x.sum() > 0:\n        return 1\n    return 0\n")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "TracerBoolConversionError" in report.message and "jnp.where" in report.message
