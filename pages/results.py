"""Draw the grader's records: verdict banner, cases table, requirements checklist, jaxpr, console.

Everything the learner's code produced (outputs, printed text, tracebacks, names inside the jaxpr) is shown
as text: through ``st.code``/dataframes, or HTML-escaped where we build markup ourselves.
"""
from __future__ import annotations

import html
import json
import re
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from grader.records import Report, RequirementResult, Verdict

_BANNER = {
    Verdict.ACCEPTED: st.success,
    Verdict.WRONG_ANSWER: st.error,
    Verdict.REQUIREMENTS_NOT_MET: st.warning,
    Verdict.INTERNAL_ERROR: st.info,
}


def fmt_value(value: Any, limit: int = 160) -> str:
    """A compact, rounded rendering of a nested list of numbers."""
    if value is None:
        return ""
    try:
        arr = np.asarray(value, dtype=np.float64)
        text = np.array2string(arr, separator=", ", max_line_width=10_000, threshold=60,
                               formatter={"float_kind": _number}).replace("\n", "")
    except (ValueError, TypeError):
        text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(v: float) -> str:
    text = f"{v:.7g}"
    return text + ".0" if text.lstrip("-").isdigit() else text


def fmt_inputs(inputs: dict[str, Any] | None) -> str:
    if not inputs:
        return ""
    parts = []
    for name, value in inputs.items():
        if isinstance(value, dict):
            parts.append(f"{name}={{" + ", ".join(f"{k}: {fmt_value(v, 60)}" for k, v in value.items()) + "}")
        else:
            parts.append(f"{name}={fmt_value(value, 80)}")
    return "; ".join(parts)


def verdict_banner(report: Report, kind: str) -> None:
    what = "Submit (examples + hidden cases)" if kind == "submit" else "Run (visible examples)"
    passed = sum(c.passed for c in report.cases)
    body = (f"**{report.verdict.label}** · {passed}/{len(report.cases)} cases passed · "
            f"{report.elapsed_s:.1f} s · {what}\n\n{md_text(report.message)}")
    _BANNER.get(report.verdict, st.error)(body, icon=":material/check_circle:"
                                          if report.verdict is Verdict.ACCEPTED else None)


def cases_frame(report: Report) -> pd.DataFrame:
    """One row per case and output leaf; hidden cases show pass/fail and the grader's message only."""
    rows = []
    for case in report.cases:
        mark = "✓ pass" if case.passed else "✗ fail"
        if case.hidden or not case.leaves:
            rows.append({"Case": case.name, "Inputs": "(hidden)" if case.hidden else fmt_inputs(case.inputs),
                         "Output": "", "Expected": "", "Got": "", "Max abs err": None, "Result": mark,
                         "Message": case.message})
            continue
        for i, leaf in enumerate(case.leaves):
            rows.append({"Case": case.name, "Inputs": fmt_inputs(case.inputs) if i == 0 else "",
                         "Output": leaf.path, "Expected": fmt_value(leaf.expected), "Got": fmt_value(leaf.got),
                         "Max abs err": leaf.max_abs_err, "Result": "✓ pass" if leaf.passed else "✗ fail",
                         "Message": "" if leaf.passed else leaf.message})
    return pd.DataFrame(rows, columns=["Case", "Inputs", "Output", "Expected", "Got", "Max abs err", "Result",
                                       "Message"])


def cases_summary(report: Report) -> str:
    parts = []
    for label, hidden in (("Examples", False), ("Hidden cases", True)):
        group = [c for c in report.cases if c.hidden is hidden]
        if group:
            parts.append(f"{label}: {sum(c.passed for c in group)}/{len(group)} passed")
    return " · ".join(parts)


def cases_table(report: Report) -> None:
    frame = cases_frame(report)
    st.markdown(cases_summary(report))
    st.dataframe(frame, hide_index=True, width="stretch", height=min(36 * len(frame) + 40, 640),
                 column_config={"Max abs err": st.column_config.NumberColumn(format="%.2e"),
                                "Inputs": st.column_config.TextColumn(width="medium"),
                                "Message": st.column_config.TextColumn(width="large")})


def requirements_checklist(requirements: list[RequirementResult], note: str = "", checked: bool = True) -> None:
    """Each requirement's sentence with ✓/✗ and the check's message (a neutral ○ before any run)."""
    for req in requirements:
        mark = ":gray[**○**]" if not checked else ":green[**✓**]" if req.passed else ":red[**✗**]"
        lines = sorted({e.jaxpr_line for e in req.evidence if e.jaxpr_line})
        where = f" · jaxpr line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines[:8]))}" if lines else ""
        with st.container(border=True, key=f"req-{req.id}"):
            st.markdown(f"{mark} **`{req.id}`** {req.text}")
            st.markdown(md_text(req.message))
            if where:
                st.caption(where.lstrip(" ·").capitalize() + " (highlighted in the jaxpr tab)")
    if note:
        st.caption(note)


_MARKUP = re.compile(r"([\\*_{}\[\]()#+\-.!|<>$~:=^])")


def md_text(text: str) -> str:
    """Grader messages quote the learner's values, keys and exception text: keep their `code` spans, and make
    every other character that Markdown (links, images, math, Streamlit's :colour[] directives) could act on
    a literal one. Inside a code span nothing is interpreted, however the backticks pair up."""
    parts = str(text).split("`")
    return "`".join(p if i % 2 else _MARKUP.sub(r"\\\1", p) for i, p in enumerate(parts))


def evidence_lines(report: Report) -> dict[int, list[str]]:
    """jaxpr line -> the notes of requirement checks that looked at it."""
    marks: dict[int, list[str]] = {}
    for req in report.requirements:
        for ev in req.evidence:
            if ev.jaxpr_line:
                tag = f"{'✓' if req.passed else '✗'} {req.id}" + (f": {ev.note}" if ev.note else "")
                marks.setdefault(ev.jaxpr_line, [])
                if tag not in marks[ev.jaxpr_line]:
                    marks[ev.jaxpr_line].append(tag)
    return marks


def jaxpr_html(text: str, marks: dict[int, list[str]] | None = None, max_lines: int = 2000) -> str:
    """The printed jaxpr as escaped, numbered lines; lines a requirement looked at are highlighted."""
    marks = marks or {}
    out = ['<div class="jaxplay-jaxpr" style="font-family: ui-monospace, SFMono-Regular, Menlo, monospace; '
           'font-size: 0.8rem; line-height: 1.45; overflow: auto; max-height: 34rem; '
           'border: 1px solid rgba(128,128,128,0.35); border-radius: 0.5rem; padding: 0.4rem 0;">']
    lines = text.splitlines()
    for n, line in enumerate(lines[:max_lines], 1):
        tags = marks.get(n)
        bg = "background: rgba(255, 189, 69, 0.28);" if tags else ""
        note = (f'<span style="color: #d97706; font-weight: 600;"> ◀ {html.escape("; ".join(tags))}</span>'
                if tags else "")
        out.append(f'<div data-line="{n}" style="white-space: pre; padding: 0 0.6rem; {bg}">'
                   f'<span style="display: inline-block; width: 3.2em; color: rgba(128,128,128,0.9); '
                   f'user-select: none; text-align: right; margin-right: 0.9em;">{n}</span>'
                   f'{html.escape(line)}{note}</div>')
    if len(lines) > max_lines:
        out.append(f'<div style="padding: 0 0.6rem;">… {len(lines) - max_lines} more lines</div>')
    out.append("</div>")
    return "".join(out)


def jaxpr_view(text: str, marks: dict[int, list[str]] | None = None,
               empty: str = "No traced program: your function could not be traced on the first example.") -> None:
    if not text.strip():
        st.caption(empty)
        return
    st.html(jaxpr_html(text, marks))


def console(report: Report) -> None:
    """stdout, stderr and traceback as plain text (Streamlit escapes ``st.code``)."""
    shown = False
    for title, text in (("Traceback", report.traceback), ("stdout", report.stdout), ("stderr", report.stderr)):
        if text.strip():
            st.markdown(f"**{title}**")
            st.code(text, language=None, wrap_lines=True)
            shown = True
    if report.output_truncated:
        st.caption("Output was longer than the cap and was cut.")
    if not shown:
        st.caption("Your code printed nothing.")


def error_line(report: Report) -> int | None:
    """The submission's line where a syntax error or exception was raised, if the report says."""
    if report.verdict is Verdict.SYNTAX_ERROR:
        m = re.search(r"on line (\d+)", report.message)
        return int(m.group(1)) if m else None
    lines = re.findall(r'File "solution.py", line (\d+)', report.traceback or "")
    return int(lines[-1]) if lines else None
