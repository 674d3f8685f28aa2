"""A class's recorded Runs and Submits as CSV: one row per attempt, for the teacher's spreadsheet."""
from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Sequence

from grader.records import unmarked

from classroom.store import Attempt, Learner

COLUMNS = ("nickname", "problem", "kind", "verdict", "requirements_passed", "requirements_failed", "at",
           "elapsed_s", "failure")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def iso(at: dt.datetime) -> str:
    """A stored (UTC) time in ISO 8601 with its offset."""
    return at.replace(tzinfo=dt.timezone.utc).isoformat(timespec="seconds")


def cell(text: str) -> str:
    """Learner text made inert for a spreadsheet: a leading ``=``, ``+``, ``-`` or ``@`` would start a formula
    (``=HYPERLINK(...)``) when the teacher opens the file, so such a cell gets a leading apostrophe."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_text(learners: Sequence[Learner], attempts: Sequence[Attempt]) -> str:
    names = {learner.id: learner.nickname for learner in learners}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for a in sorted(attempts, key=lambda a: a.id):
        if a.learner_id not in names:
            continue
        writer.writerow([cell(names[a.learner_id]), a.problem, a.kind, a.verdict, " ".join(a.passed),
                         " ".join(a.failed), iso(a.at), f"{a.elapsed_s:.2f}", cell(unmarked(a.failure))])
    return out.getvalue()
