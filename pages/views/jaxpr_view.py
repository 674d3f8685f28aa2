"""The printed jaxpr as a listing that explains itself.

Numbered, HTML-escaped lines; each equation a requirement check pointed at is highlighted (red for a failing
requirement, green for a passing one) with the reason in words and the learner's own source line; each
sub-program (``{ lambda ... }``) can be folded; the listing opens at the first equation a failing requirement
points at (``data-focus``, scrolled to by the browser bridge), and jump links (``data-jaxpr-line``) take the
learner from a requirement to its equations.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

from grader.records import Report, RequirementResult, unmarked

MAX_LINES = 3000


@dataclass(frozen=True)
class Mark:
    """Why a line is highlighted: a requirement, whether it holds, the check's note and the learner's line."""

    req: str
    passed: bool
    """False only for a deciding requirement that fails (advice never shows as a failure)."""
    note: str = ""
    source_line: int | None = None
    symbol: str = ""

    def words(self) -> str:
        where = f" · your line {self.source_line}" if self.source_line else ""
        mark = self.symbol or ("✓" if self.passed else "✗")
        return f"{mark} {self.req}" + (f": {unmarked(self.note)}" if self.note else "") + where


def marks(requirements: list[RequirementResult]) -> dict[int, list[Mark]]:
    """jaxpr line -> the requirement checks that looked at the equation on it."""
    out: dict[int, list[Mark]] = {}
    for req in requirements:
        for ev in req.evidence:
            if ev.jaxpr_line:
                mark = Mark(req.id, req.passed or not req.decides, ev.note or ev.primitive, ev.source_line, req.mark)
                if mark not in out.setdefault(ev.jaxpr_line, []):
                    out[ev.jaxpr_line].append(mark)
    return out


def focus_line(report: Report) -> int | None:
    """The first equation the first failing requirement points at (None when nothing fails there)."""
    for req in report.requirements:
        lines = [ev.jaxpr_line for ev in req.evidence if ev.jaxpr_line]
        if not req.passed and req.decides and lines:
            return lines[0]
    return None


def folds(lines: list[str]) -> dict[int, int]:
    """Start line -> end line (0-based, inclusive) of each sub-program printed as ``{ lambda ... }`` over
    several lines, found by balancing braces from the ``{ lambda``; the whole program itself is not folded."""
    out: dict[int, int] = {}
    for i, line in enumerate(lines):
        at = line.find("{ lambda")
        if at < 0:
            continue
        depth = 0
        for j in range(i, len(lines)):
            text = lines[j][at:] if j == i else lines[j]
            depth += text.count("{") - text.count("}")
            if depth <= 0:
                if j > i and not (i == 0 and j == len(lines) - 1):
                    out[i] = j
                break
    return out


def listing_html(text: str, line_marks: dict[int, list[Mark]] | None = None, *, focus: int | None = None,
                 role: str = "mine") -> str:
    """The listing as HTML (every character of the program escaped)."""
    line_marks = line_marks or {}
    lines = text.splitlines()[:MAX_LINES]
    starts = folds(lines)
    ends: dict[int, int] = {}
    for start, end in starts.items():
        ends[end] = ends.get(end, 0) + 1
    attrs = f' data-focus="{focus}"' if focus else ""
    out = [f'<div class="jaxplay-jaxpr {role}"{attrs}>']
    for i, line in enumerate(lines):
        n = i + 1
        tags = line_marks.get(n, [])
        cls = "ln" + ((" fail" if any(not m.passed for m in tags) else " pass") if tags else "")
        why = (f'<span class="why">  ◀ {html.escape("; ".join(m.words() for m in tags))}</span>' if tags else "")
        row = (f'<div class="{cls}" data-line="{n}"><span class="no">{n}</span><span class="fold"></span>'
               f'{html.escape(line)}{why}</div>')
        if i in starts:
            out.append(f'<details open><summary>{row}</summary>')
        else:
            out.append(row)
        out.append("</details>" * ends.get(i, 0))
    if len(text.splitlines()) > MAX_LINES:
        out.append(f'<div class="ln">… {len(text.splitlines()) - MAX_LINES} more lines</div>')
    out.append("</div>")
    return "".join(out)


def jumps_html(requirements: list[RequirementResult]) -> str:
    """One line per requirement with links to the equations it looked at."""
    rows = []
    for req in requirements:
        lines = sorted({ev.jaxpr_line for ev in req.evidence if ev.jaxpr_line})
        if not lines:
            continue
        # the numbers are lines of the traced program (the jaxpr tab's listing), not of the learner's code
        links = ", ".join(f'<a data-jaxpr-line="{n}" href="#jaxpr-line-{n}" title="Show line {n} of the jaxpr">{n}</a>'
                          for n in lines[:12])
        mark = req.mark
        what = "jaxpr line" if len(lines) == 1 else "jaxpr lines"
        rows.append(f'<div>{mark} <code>{html.escape(req.id)}</code> → {what} {links} '
                    '<span class="jaxplay-jumps-where">(the traced program, in the jaxpr tab)</span></div>')
    return f'<div class="jaxplay-jumps">{"".join(rows)}</div>' if rows else ""
