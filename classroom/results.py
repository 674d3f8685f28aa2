"""A grading's report as the row the class keeps: the one hook between the grader and the class board.

The row is made on the server from the grader's ``Report`` and nothing else: the verdict word, each
requirement's pass or fail, a short failure line the board can count, the code that was graded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from grader.records import Report, Verdict

KINDS = ("run", "submit")
COULD_NOT_RUN = frozenset({"syntax_error", "runtime_error", "time_limit", "memory_limit", "output_limit",
                           "internal_error"})
"""Verdicts of a grading that never got as far as the requirements: the code did not parse, raised, ran out
of time or memory, or the grader failed. Such an attempt passes and fails no requirement: the board, the
CSV and the figures keep it apart from code that ran and fails one."""


def could_not_run(verdict: str) -> bool:
    return verdict in COULD_NOT_RUN
MAX_CODE_CHARS = 100_000
MAX_FAILURE_CHARS = 240
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Outcome:
    """One Run or Submit as the class records it."""

    problem: str
    kind: str
    """``run`` or ``submit``."""
    verdict: str
    """The CLI's word: ``accepted``, ``wrong_answer``, ``requirements_not_met``, ``syntax_error``..."""
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    failure: str
    """What went wrong, in a form that is the same for learners who made the same mistake (numbers left out),
    '' when accepted. Learner text in it keeps the grader's marks (``grader.records.learner``)."""
    code: str
    elapsed_s: float


def outcome(problem: str, kind: str, code: str, report: Report) -> Outcome:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    checked = () if could_not_run(report.verdict.value) else report.requirements
    return Outcome(problem=problem, kind=kind, verdict=report.verdict.value,
                   passed=tuple(r.id for r in checked if r.passed),
                   failed=tuple(r.id for r in checked if not r.passed),
                   failure=failure_line(report), code=code[:MAX_CODE_CHARS], elapsed_s=float(report.elapsed_s))


def failure_line(report: Report) -> str:
    """The mistake, countable across learners: a failed requirement by its sentence, a wrong answer by the
    first differing output, an error by its message, every number replaced by ``…``."""
    if report.verdict is Verdict.ACCEPTED:
        return ""
    if report.verdict is Verdict.REQUIREMENTS_NOT_MET:
        req = next((r for r in report.requirements if not r.passed), None)
        if req is not None:
            return _cap(f"`{req.id}` not met: {req.text}")
    if report.verdict is Verdict.WRONG_ANSWER:
        case = next((c for c in report.cases if not c.passed), None)
        if case is not None:
            leaf = next((leaf for leaf in case.leaves if not leaf.passed), None)
            detail = leaf.message if leaf is not None else case.message
            return _cap(f"{report.verdict.label}: {_NUMBER.sub('…', detail)}")
    return _cap(f"{report.verdict.label}: {_NUMBER.sub('…', report.message)}")


def _cap(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_FAILURE_CHARS else text[:MAX_FAILURE_CHARS - 1] + "…"
