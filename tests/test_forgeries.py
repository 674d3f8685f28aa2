"""Forgeries of a verdict (issue 23), graded through the verifier (``JAXPLAY_VERIFIER``): each ends in its
honest verdict, because the numbers, the program the checks read and the probes come from the verifier's
rebuild of the traced program, not from the learner's process.

Each file in ``tests/forgeries/`` says what it does and the verdict it must get (``# expect: ...``).
"""
from __future__ import annotations

from pathlib import Path

import pytest

import problems
from grader.grade import grade
from grader.verifier import service
from grader.workers import worker_pool

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
    monkeypatch.setattr(service, "ENABLED", True)


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


@pytest.mark.parametrize("name", ["unflatten_swap", "perfect_report_then_exit"])
def test_without_the_verifier_these_forgeries_are_accepted(name, pool, monkeypatch):
    """What the verifier is for: graded by the child alone (today's default path), these two are accepted.
    When the verifier becomes the default path, this test goes (``JAXPLAY_VERIFIER``)."""
    monkeypatch.setattr(service, "ENABLED", False)
    path = FORGERIES[0].parent / f"{name}.py"
    report = grade(problems.get(_head(path)["problem"]), path.read_text(), examples_only=True, run=pool.run)
    assert report.verdict.value == "accepted", report.message
