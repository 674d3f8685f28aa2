"""Typed result records: what the grader returns and the app and CLI render.

Three kinds of failure are kept apart (see ``ErrorKind``): the learner's code raised, ran out of a limit
or crashed; the submission is malformed (syntax error, no entry function); the grader itself broke.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any

LEARNER_OPEN, LEARNER_CLOSE = "\ue000", "\ue001"
"""Private-use characters around learner text inside a grader message (see ``learner``)."""


def learner(text: Any) -> str:
    """Mark ``text`` as the learner's inside a grader message: their exception text, output keys, names and
    values. Messages are Markdown on purpose (`code`, *emphasis*); the app shows marked text literally, so
    nothing the learner controls can add a link, an image, HTML or formatting (``pages/views/markup.py``). Marks
    the learner's text itself carries are dropped, so it cannot end its own quotation."""
    clean = str(text).replace(LEARNER_OPEN, "").replace(LEARNER_CLOSE, "")
    return f"{LEARNER_OPEN}{clean}{LEARNER_CLOSE}"


def unmarked(text: str) -> str:
    """The message as plain text, learner marks removed (for the command line and its JSON)."""
    return text.replace(LEARNER_OPEN, "").replace(LEARNER_CLOSE, "")


def _strip_marks(value: Any) -> Any:
    if isinstance(value, str):
        return unmarked(value)
    if isinstance(value, list):
        return [_strip_marks(v) for v in value]
    if isinstance(value, dict):
        return {k: _strip_marks(v) for k, v in value.items()}
    return value


class Verdict(str, Enum):
    """The one-word outcome of grading a submission, in the order of precedence used to pick it."""

    SYNTAX_ERROR = "syntax_error"
    RUNTIME_ERROR = "runtime_error"
    TIME_LIMIT = "time_limit"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    INTERNAL_ERROR = "internal_error"
    WRONG_ANSWER = "wrong_answer"
    REQUIREMENTS_NOT_MET = "requirements_not_met"
    ACCEPTED = "accepted"

    @property
    def label(self) -> str:
        """The words shown to a learner, e.g. ``Time Limit Exceeded``."""
        return VERDICT_LABELS[self]


VERDICT_LABELS = {
    Verdict.ACCEPTED: "Accepted",
    Verdict.WRONG_ANSWER: "Wrong Answer",
    Verdict.REQUIREMENTS_NOT_MET: "Requirements Not Met",
    Verdict.RUNTIME_ERROR: "Runtime Error",
    Verdict.SYNTAX_ERROR: "Syntax Error",
    Verdict.TIME_LIMIT: "Time Limit Exceeded",
    Verdict.MEMORY_LIMIT: "Memory Limit Exceeded",
    Verdict.OUTPUT_LIMIT: "Output Limit Exceeded",
    Verdict.INTERNAL_ERROR: "Internal Grader Error",
}


class ErrorKind(str, Enum):
    """Whose fault a failure to grade is."""

    LEARNER = "learner"  # the code raised, crashed, or hit a time/memory/output limit
    SUBMISSION = "submission"  # malformed: syntax error, missing entry function
    GRADER = "grader"  # our bug or our infrastructure; never reported as the learner's fault


@dataclass
class Evidence:
    """One equation of the traced program that a requirement check looked at."""

    path: str
    """Where the equation sits: ``"3"`` is equation 3 of the top level, ``"3/jaxpr/5"`` is equation 5
    of the sub-program held in parameter ``jaxpr`` of equation 3."""
    primitive: str
    """The primitive's name as JAX prints it (``scan``, ``dot_general``, ``remat2``...)."""
    jaxpr_line: int | None = None
    """1-based line of the equation in the printed jaxpr (``Report.jaxpr_text``), if it could be found."""
    source_line: int | None = None
    """1-based line in the learner's code that produced the equation, if JAX recorded one."""
    note: str = ""
    """Why this equation matters, e.g. ``matrix product outside the scan``."""


@dataclass
class RequirementResult:
    """Whether one structural requirement holds on the traced program of every graded case."""

    id: str
    """Stable requirement id from the problem, e.g. ``one-scan`` (a contract with the CLI and app)."""
    text: str
    """The requirement's sentence as the problem states it."""
    passed: bool
    """True only if the check held on every traced case."""
    message: str
    """What the check saw and, when it failed, what to change."""
    evidence: list[Evidence] = field(default_factory=list)
    """Equations the check looked at, for highlighting in the app."""
    checked: bool = True
    """False when the grader could not check this requirement on this server (a Pallas problem's "Compiles for
    a TPU v5e" without the TPU extra): the row is not passed, says why, and does not decide the verdict."""
    advice: bool = False
    """True for advice: a way the statement recommends that no property of the program can establish (how
    autodiff was asked for, which transformation batched a function). ``passed`` says whether what the grader
    saw fits the advice; the row is shown with its evidence and never decides the verdict."""

    @property
    def mark(self) -> str:
        """The row's symbol wherever it is shown: ✓ holds, ✗ fails, ○ not checked on this server, ℹ advice."""
        if self.advice:
            return "ℹ"
        if not self.checked:
            return "○"
        return "✓" if self.passed else "✗"

    @property
    def decides(self) -> bool:
        """Whether this row counts toward the verdict (a checked requirement, not advice)."""
        return self.checked and not self.advice


@dataclass
class LeafResult:
    """Comparison of one output leaf (``loss``, ``grads.w1``...) of one case."""

    path: str
    passed: bool
    message: str
    expected: Any = None
    """Expected value as nested lists (visible cases only)."""
    got: Any = None
    """The learner's value as nested lists (visible cases only)."""
    max_abs_err: float | None = None


@dataclass
class CaseResult:
    """The outcome of one test case."""

    name: str
    """``Example 1``... for visible examples, ``Hidden 1``... for hidden cases."""
    hidden: bool
    passed: bool
    message: str
    """One sentence: ``ok``, or the first thing that differed, or the error the code raised."""
    inputs: dict[str, Any] | None = None
    """The case's arguments (visible cases only; hidden inputs are never reported)."""
    leaves: list[LeafResult] = field(default_factory=list)
    """Per-leaf comparison; for hidden cases values are left out."""


@dataclass
class Region:
    """One nested region of a traced program, for drawing its structure: the program itself, a call of a
    sub-program (``jit``, ``scan``, ``while``, ``cond``, ``checkpoint``, ``custom_vjp``, ``custom_jvp``) or a
    run of consecutive equations that a transformation produced (``vmap``, the ``forward`` and ``backward``
    passes of autodiff). Built by ``grader/toolkit/structure.py`` from the structured program the child sends."""

    kind: str
    """``program``, ``part`` (one of several sub-programs, e.g. a cond branch), a call's kind as above, or a
    transformation's (``vmap``, ``forward``, ``backward``)."""
    label: str
    """A few words to draw, e.g. ``scan · length 4 · reverse``."""
    path: str = ""
    """The equation's path (as in ``Evidence.path``); for a transformation's run, its first equation's;
    for a part, its sub-program's prefix (``3/branches[1]/``); empty for the program."""
    span: int = 1
    """For a transformation's run: how many consecutive equations of its program it covers."""
    line: int | None = None
    """1-based line of the region's equation in the printed jaxpr, when known."""
    source_line: int | None = None
    """The learner's line that produced it, when JAX recorded one."""
    eqns: int = 0
    """Equations directly inside (not inside a child region)."""
    primitives: list[str] = field(default_factory=list)
    """The most frequent primitives among those equations, most frequent first (at most five)."""
    children: list["Region"] = field(default_factory=list)

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Region":
        return Region(**{**d, "children": [Region.from_json(c) for c in d.get("children", [])]})


@dataclass
class Report:
    """Everything known about grading one submission of one problem."""

    file: str
    """Where the code came from (a path for the CLI, ``<editor>`` in the app)."""
    problem: str
    """The problem's slug."""
    verdict: Verdict
    message: str
    """A one-line summary of the verdict for a learner."""
    cases: list[CaseResult] = field(default_factory=list)
    requirements: list[RequirementResult] = field(default_factory=list)
    stdout: str = ""
    """The learner's standard output, capped."""
    stderr: str = ""
    """The learner's standard error, capped."""
    traceback: str = ""
    """The learner-facing traceback when the code raised, trimmed to the submission's frames."""
    error_kind: ErrorKind | None = None
    """Set when grading could not complete normally: whose fault it was."""
    elapsed_s: float = 0.0
    """Wall-clock seconds for the whole grading."""
    jaxpr_text: str = ""
    """The traced program of the first visible case as JAX prints it."""
    output_truncated: bool = False
    """True when stdout/stderr were longer than the cap and were cut."""
    structure: Region | None = None
    """The nested regions of the traced program in ``jaxpr_text`` (None when nothing was traced)."""
    limits: dict[str, Any] = field(default_factory=dict)
    """The limits this grading ran under (``wall_s``...), so a verdict can say what was allowed."""
    tpu: dict[str, Any] | None = None
    """A Pallas problem's Submit: the trusted side's TPU v5e compile record of the kernel at the realistic size
    (``grader/verifier/tpu_compile.py``: ``status``, ``peak_bytes``, the ``kernel`` figures counted from its grid
    and blocks), which the Cost tab shows; None elsewhere."""

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    def to_json(self, *, marks: bool = False) -> dict[str, Any]:
        """The CLI's JSON object: the contract fields first, then extra detail. Learner marks (``learner``)
        are removed unless ``marks`` is set (the app keeps them when it saves a verdict in the browser)."""
        d = asdict(self) if marks else _strip_marks(asdict(self))
        d["verdict"] = self.verdict.value
        d["error_kind"] = self.error_kind.value if self.error_kind else None
        for case in d["cases"]:
            if case["hidden"]:
                case.pop("inputs", None)
                for leaf in case["leaves"]:
                    leaf.pop("expected", None)
                    leaf.pop("got", None)
        ordered = {k: d.pop(k) for k in ("file", "problem", "verdict", "cases", "requirements",
                                         "stdout", "stderr", "elapsed_s")}
        ordered.update(d)
        return ordered

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Report":
        """A report back from ``to_json`` (hidden cases come back without their inputs and values)."""
        known = {f.name for f in fields(Report)}
        d = {k: v for k, v in d.items() if k in known}
        d["verdict"] = Verdict(d["verdict"])
        d["error_kind"] = ErrorKind(d["error_kind"]) if d.get("error_kind") else None
        d["cases"] = [CaseResult(**{**c, "leaves": [LeafResult(**leaf) for leaf in c.get("leaves", [])]})
                      for c in d.get("cases", [])]
        d["requirements"] = [RequirementResult(**{**r, "evidence": [Evidence(**e) for e in r.get("evidence", [])]})
                             for r in d.get("requirements", [])]
        d["structure"] = Region.from_json(d["structure"]) if d.get("structure") else None
        return Report(**d)


def pick_verdict(*, error: Verdict | None, cases: list[CaseResult],
                 requirements: list[RequirementResult]) -> Verdict:
    """Errors and limits first, then wrong answers, then unmet requirements."""
    if error is not None:
        return error
    if not cases or not all(c.passed for c in cases):
        return Verdict.WRONG_ANSWER
    if not all(r.passed or not r.decides for r in requirements):
        return Verdict.REQUIREMENTS_NOT_MET
    return Verdict.ACCEPTED
