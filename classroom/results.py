"""A grading's report as the row the class keeps: the one hook between the grader and the class board.

The row is made on the server from the grader's ``Report`` and nothing else: the verdict word, each
requirement's pass or fail, a short failure line the board can count, the code that was graded.

Every text a row carries is made storable before it goes anywhere (``Outcome.storable``): learner text can
hold anything a Python string can, and databases refuse some of it (PostgreSQL a NUL, SQLite an unpaired
surrogate), so one learner's exception message must not be the row that no database takes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from grader.records import LEARNER_CLOSE, LEARNER_OPEN, Report, Verdict, unmarked

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
"""A failure line quoting an error message is cut (at a word, with an ellipsis) past this many characters; a
failed requirement's line is its id and sentence, never cut."""
MAX_REQUIREMENT_LINE = 1000
MAX_IDS_CHARS = 4000
"""The requirement ids of one row, joined: problems have a handful; a bound all the same."""
LIMITS = {"problem": 200, "kind": 16, "verdict": 32}
"""Characters of each short column (their ``VARCHAR`` sizes: PostgreSQL refuses a longer value)."""
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_CODE_SPAN = re.compile(r"`+([^`]*)`+")


def storable(text: object, limit: int) -> str:
    """``text`` as every database stores it: NUL and unpaired surrogates replaced by U+FFFD (a surrogate pair
    becomes the one character it stands for), at most ``limit`` characters (cut with an ellipsis)."""
    s = "" if text is None else str(text)
    if not s.isascii():
        s = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if "\x00" in s:
        s = s.replace("\x00", "\ufffd")
    return s if len(s) <= limit else s[:max(0, limit - 1)] + "…"[:limit]


def plain_failure(text: str) -> str:
    """A failure line as plain text: the grader's Markdown code spans unwrapped (rows recorded before the
    lines were plain text had `` `id` not met``) and a backtick an old cut left dangling dropped, while the
    learner's own text (between the grader's marks) is kept exactly; the marks go."""
    parts = re.split(f"({LEARNER_OPEN}.*?{LEARNER_CLOSE})", str(text), flags=re.S)
    out = []
    for part in parts:
        if part.startswith(LEARNER_OPEN) and part.endswith(LEARNER_CLOSE):
            out.append(part[1:-1])
        else:
            part = _CODE_SPAN.sub(lambda m: m.group(1), unmarked(part))
            out.append(part.replace("`", "") if part.count("`") % 2 else part)
    return "".join(out)


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

    def storable(self) -> "Outcome":
        """This outcome with every text storable (``storable``) and a finite time: what the outbox keeps and
        the store writes, whatever the learner's code printed or raised."""
        passed, failed = _ids(self.passed), _ids(self.failed)
        seconds = float(self.elapsed_s) if isinstance(self.elapsed_s, (int, float)) else 0.0
        return replace(self, problem=storable(self.problem, LIMITS["problem"]), kind=storable(self.kind, LIMITS["kind"]),
                       verdict=storable(self.verdict, LIMITS["verdict"]), passed=passed, failed=failed,
                       failure=storable(self.failure, MAX_REQUIREMENT_LINE),
                       code=storable(self.code, MAX_CODE_CHARS),
                       elapsed_s=min(max(seconds, 0.0), 1e9) if math.isfinite(seconds) else 0.0)


def _ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    """Requirement ids as the row keeps them (space-separated): each storable, without spaces, all bounded."""
    out, used = [], 0
    for rid in ids:
        rid = "".join(storable(rid, 200).split())
        if rid and used + len(rid) + 1 <= MAX_IDS_CHARS:
            out.append(rid)
            used += len(rid) + 1
    return tuple(out)


def outcome(problem: str, kind: str, code: str, report: Report) -> Outcome:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    checked = () if could_not_run(report.verdict.value) else [r for r in report.requirements
                                                               if not getattr(r, "advice", False)]
    return Outcome(problem=problem, kind=kind, verdict=report.verdict.value,
                   passed=tuple(r.id for r in checked if r.passed),
                   failed=tuple(r.id for r in checked if not r.passed),
                   failure=failure_line(report), code=code[:MAX_CODE_CHARS], elapsed_s=float(report.elapsed_s))


def failure_line(report: Report) -> str:
    """The mistake as plain text, countable across learners: a failed requirement by its id and sentence (in
    full), a wrong answer by the first differing output, an error by its message, every number of those two
    replaced by ``…`` (and cut at a word past ``MAX_FAILURE_CHARS``)."""
    if report.verdict is Verdict.ACCEPTED:
        return ""
    if report.verdict is Verdict.REQUIREMENTS_NOT_MET:
        req = next((r for r in report.requirements if not r.passed), None)
        if req is not None:
            return " ".join(plain_failure(f"{req.id} not met: {req.text}").split())[:MAX_REQUIREMENT_LINE]
    if report.verdict is Verdict.WRONG_ANSWER:
        case = next((c for c in report.cases if not c.passed), None)
        if case is not None:
            leaf = next((leaf for leaf in case.leaves if not leaf.passed), None)
            detail = leaf.message if leaf is not None else case.message
            return _cap(f"{report.verdict.label}: {_NUMBER.sub('…', detail)}")
    return _cap(f"{report.verdict.label}: {_NUMBER.sub('…', report.message)}")


def _cap(text: str) -> str:
    """Plain text on one line, cut at a word boundary with an ellipsis past ``MAX_FAILURE_CHARS``."""
    text = " ".join(plain_failure(text).split())
    if len(text) <= MAX_FAILURE_CHARS:
        return text
    cut = text[:MAX_FAILURE_CHARS - 1]
    at = cut.rfind(" ")
    return (cut[:at] if at >= MAX_FAILURE_CHARS // 2 else cut).rstrip(" ,;:") + "…"
