"""A class's recorded Runs and Submits as CSV: one row per attempt, for the teacher's spreadsheet."""
from __future__ import annotations

import csv
import datetime as dt
import io
import unicodedata
from typing import Sequence

from classroom.identity import invisible
from classroom.results import plain_failure
from classroom.store import Attempt, Learner

COLUMNS = ("nickname", "problem", "kind", "verdict", "requirements_passed", "requirements_failed", "at",
           "elapsed_s", "failure")
_FORMULA_START = ("=", "+", "-", "@")


def iso(at: dt.datetime) -> str:
    """A stored (UTC) time in ISO 8601 with its offset."""
    return at.replace(tzinfo=dt.timezone.utc).isoformat(timespec="seconds")


def cell(text: str) -> str:
    """Learner text made inert for a spreadsheet: a leading ``=``, ``+``, ``-`` or ``@`` would start a formula
    (``=HYPERLINK(...)``) when the teacher opens the file, so such a cell gets a leading apostrophe. What
    counts is the first *visible* character in its NFKC form: a spreadsheet may drop a leading tab, zero-width
    joiner or other invisible character, or read a full-width ``＝`` as ``=``; a cell that starts with an
    invisible character is guarded too."""
    if not text:
        return text
    rest = text.lstrip("".join(ch for ch in text[:64] if invisible(ch)))
    first = unicodedata.normalize("NFKC", rest[:1])
    return "'" + text if first.startswith(_FORMULA_START) or rest != text else text


def csv_text(learners: Sequence[Learner], attempts: Sequence[Attempt]) -> str:
    """One row per recorded attempt, in the order they were written; the failure column as plain text (no
    Markdown, never a cut code span), as the board shows it."""
    names = {learner.id: learner.nickname for learner in learners}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for a in sorted(attempts, key=lambda a: a.id):
        if a.learner_id not in names:
            continue
        writer.writerow([cell(names[a.learner_id]), a.problem, a.kind, a.verdict, " ".join(a.passed),
                         " ".join(a.failed), iso(a.at), f"{a.elapsed_s:.2f}", cell(plain_failure(a.failure))])
    return out.getvalue()
