"""Requirement checks run in a process of their own under a time budget (``grader/grading/checker.py``): a check that
runs too long is a Time Limit verdict that says the grader ran out of time reading the program's structure,
the server's own threads spend no CPU on it, and the next submission is graded as usual."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import problems
from grader.grading import checker
from grader.grading.grade import grade
from grader.records import ErrorKind, Verdict

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 2.0


def _template_with_checks(tmp_path: Path, body: str) -> problems.Problem:
    """The template problem, with its one check replaced by ``body`` (the check's statements)."""
    folder = tmp_path / "row-sums"
    shutil.copytree(problems.ROOT / "_template", folder)
    (folder / "checks.py").write_text("import os\nfrom grader.toolkit.jaxpr_tools import CheckResult\n\n\n"
                                      "def uses_reduce(trace):\n" + body +
                                      "\n    return CheckResult(True, 'ok')\n\n\nCHECKS = {'uses-reduce': uses_reduce}\n")
    return problems.load_problem(folder)


@pytest.fixture
def short_budget(monkeypatch):
    monkeypatch.setattr(checker, "BUDGET_S", BUDGET_S)


@pytest.mark.slow
def test_a_check_that_never_ends_is_a_time_limit_that_says_why(tmp_path, short_budget):
    problem = _template_with_checks(tmp_path, "    while True:\n        pass")
    cpu, wall = time.process_time(), time.monotonic()
    report = grade(problem, problem.reference, examples_only=True)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    assert report.verdict is Verdict.TIME_LIMIT and report.error_kind is ErrorKind.LEARNER, report.message
    assert f"could not finish checking this program's structure within {BUDGET_S:g} s" in report.message
    assert all(c.passed for c in report.cases)  # the outputs were compared as usual
    assert [r.message for r in report.requirements] == ["Not checked: the grader ran out of time reading your "
                                                         "program's structure."]
    assert wall < BUDGET_S + 30
    assert cpu < BUDGET_S, f"the grading process itself spent {cpu:.1f} s of CPU"  # the loop ran elsewhere
    real = problems.get("rematerialized-mlp-block")
    assert grade(real, real.reference, examples_only=True).verdict is Verdict.ACCEPTED


def test_a_checking_process_that_dies_is_the_graders_fault(tmp_path):
    problem = _template_with_checks(tmp_path, "    os._exit(3)")
    report = grade(problem, problem.reference, examples_only=True)
    assert report.verdict is Verdict.INTERNAL_ERROR and report.error_kind is ErrorKind.GRADER, report.message
    assert "not your fault" in report.message


def test_twenty_nested_one_step_scans_are_checked_within_the_budget(short_budget):
    """Each scan starts from a constant, so a data-flow walk that revisits a loop body until its carry stops
    growing visits the innermost body 2**20 times. Whatever the walk costs, grading ends within the budget."""
    problem = problems.get("traced-learning-rate-schedule")
    code = (ROOT / "tests" / "attacks" / "twenty_nested_scans.py").read_text().replace("), 24)", "), 20)")
    assert "), 20)" in code
    cpu, wall = time.process_time(), time.monotonic()
    report = grade(problem, code, examples_only=True)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    assert report.verdict is not Verdict.ACCEPTED
    if report.verdict is Verdict.TIME_LIMIT:
        assert "could not finish checking this program's structure" in report.message
    else:  # the checks finished in time (a linear walk): the answer is wrong, and every requirement was read
        assert report.verdict is Verdict.WRONG_ANSWER, report.message
        assert not any(r.message.startswith("Not checked") for r in report.requirements)
    assert cpu < BUDGET_S + 1, f"the grading process itself spent {cpu:.1f} s of CPU"
    assert wall < 60 + BUDGET_S
