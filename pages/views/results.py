"""Draw the grader's records: verdict banner, case strip, cases table, requirements checklist, console.

Grader messages go through ``pages.views.markup.md`` (their own Markdown kept, learner text literal); everything
else the learner's code produced (outputs, printed text, tracebacks, keys) is shown as plain text: in
dataframes, ``st.code`` or escaped HTML.
"""
from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from grader.grading import numbers
from grader.records import CaseResult, LeafResult, Report, RequirementResult, Verdict, unmarked
from pages.views import jaxpr_view
from pages.views.markup import md

if TYPE_CHECKING:  # imported where it is used: a server's first page view does without it
    import pandas as pd

_BANNER = {
    Verdict.ACCEPTED: st.success,
    Verdict.WRONG_ANSWER: st.error,
    Verdict.REQUIREMENTS_NOT_MET: st.warning,
    Verdict.INTERNAL_ERROR: st.info,
}
DIGITS = numbers.DIGITS
fmt_value = numbers.value
"""A compact rendering of a nested list of numbers (``grader.grading.numbers``: the grader's messages write them alike)."""
fmt_pair = numbers.pair
"""Expected and got at the same precision, as the verdict's message writes them (``grader.grading.numbers.pair``)."""


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
            f"{report.elapsed_s:.1f} s · {what}\n\n{md(report.message)}")
    with st.container(key="verdict"):
        _BANNER.get(report.verdict, st.error)(body, icon=":material/check_circle:"
                                              if report.verdict is Verdict.ACCEPTED else None)


def short_name(name: str) -> str:
    """``Example 2`` -> ``Ex 2``, ``Hidden 11`` -> ``H 11``: the strip stays one or two lines."""
    return re.sub(r"^Example ", "Ex ", re.sub(r"^Hidden ", "H ", name))


def case_strip(report: Report) -> None:
    """One small pass/fail badge per case, in order, right under the verdict."""
    if not report.cases:
        return
    badges = []
    for case in report.cases:
        if case.message == "not run":
            badges.append(f":gray-badge[○ {short_name(case.name)}]")
        else:
            badges.append(f":{'green' if case.passed else 'red'}-badge[{'✓' if case.passed else '✗'} "
                          f"{short_name(case.name)}]")
    with st.container(key="case-strip"):
        st.markdown(" ".join(badges))


def worst_entry(leaf: LeafResult) -> str:
    """Where a failing visible leaf is furthest off: ``[1, 2]: got 0.5312, expected 0.5101``."""
    if leaf.passed or leaf.got is None or leaf.expected is None:
        return ""
    try:
        got, exp = np.asarray(leaf.got, dtype=np.float64), np.asarray(leaf.expected, dtype=np.float64)
        if got.shape != exp.shape:
            return ""
        err = np.abs(got - exp)
        err = np.where(np.isnan(err), np.inf, err)
        idx = np.unravel_index(int(np.argmax(err)), err.shape) if err.size else ()
    except (ValueError, TypeError):
        return ""
    expected_text, got_text = fmt_pair(float(exp[idx]), float(got[idx]))
    if not idx:  # a single value: the output's name says where
        return f"got {got_text}, expected {expected_text}"
    return f"[{', '.join(map(str, idx))}]: got {got_text}, expected {expected_text}"


def cases_frame(report: Report) -> pd.DataFrame:
    import pandas as pd
    """One row per case and output leaf, result first; hidden cases show pass/fail and the message only."""
    rows = []
    for case in report.cases:
        mark = "✓ pass" if case.passed else ("○ not run" if case.message == "not run" else "✗ fail")
        if case.hidden or not case.leaves:
            rows.append({"Result": mark, "Case": case.name, "Output": "", "Expected": "", "Got": "",
                         "Max abs err": "", "Worst entry": "", "Message": unmarked(case.message)})
            continue
        for leaf in case.leaves:
            rows.append({"Result": "✓ pass" if leaf.passed else "✗ fail", "Case": case.name, "Output": leaf.path,
                         **dict(zip(("Expected", "Got"), fmt_pair(leaf.expected, leaf.got))),
                         "Max abs err": f"{leaf.max_abs_err:.1e}" if leaf.max_abs_err is not None else "",
                         "Worst entry": worst_entry(leaf), "Message": "" if leaf.passed else unmarked(leaf.message)})
    # The message right after the worst entry, before the error and the values (often whole arrays, cut at the
    # right edge: their full values are in the expander below the table)
    return pd.DataFrame(rows, columns=["Result", "Case", "Output", "Worst entry", "Message", "Max abs err", "Expected",
                                       "Got"])


# Pixels a character takes in the grid's font (Streamlit's Source Sans at 14 px), a little generous: digits are
# wider than most letters, spaces and punctuation much narrower. A flat 7.6 px a character gave "Worst entry"
# a third more than it needed, and at 1400 px the Message column was pushed off the right edge (issue 46).
_NARROW, _DIGIT, _UPPER, _OTHER, _PADDING = 3.8, 7.4, 8.6, 7.0, 28


def text_px(text: str) -> float:
    """An estimate of ``text``'s width in the cases grid, in pixels at Streamlit's own text size."""
    return sum(_DIGIT if c.isdigit() else _NARROW if c in " .,:;()[]'\"-|!il" else _UPPER if c.isupper() else _OTHER
               for c in text)


def _scale() -> float:
    """The page's text scale: the presenter layout draws text up to 1.7 times larger."""
    try:
        from pages.services import progress
        prefs = progress.prefs()
        return max(1.0, min(1.7, prefs["font_size"] / 14)) if prefs.get("presenter") else 1.0
    except Exception:  # noqa: BLE001 - outside a page (tests): Streamlit's own size
        return 1.0


def column_width(frame: pd.DataFrame, column: str, most: int = 640) -> int:
    """Pixels for ``column``: its longest text whole, at the page's text scale, within ``most``."""
    longest = max((text_px(str(v)) for v in frame[column]), default=0.0)
    return int(min(most, max(120, longest * _scale() + _PADDING)))


def worst_width(frame: pd.DataFrame) -> int:
    """Pixels for the "Worst entry" column: its longest text whole (``column_width``)."""
    return column_width(frame, "Worst entry")


def _row_style(row: pd.Series, worst_row: int | None) -> list[str]:
    if not str(row["Result"]).startswith("✗"):
        return [""] * len(row)
    styles = ["background-color: rgba(255, 75, 75, 0.16)"] * len(row)
    if row.name == worst_row:  # the failing row furthest off: its Worst entry cell stands out
        styles[list(row.index).index("Worst entry")] = "background-color: rgba(255, 75, 75, 0.42); font-weight: 600"
    return styles


def cases_table(report: Report) -> None:
    frame = cases_frame(report)
    st.markdown(cases_summary(report))
    failing = [i for i, r in frame.iterrows() if str(r["Result"]).startswith("✗")]
    errs = {i: float(frame.at[i, "Max abs err"]) for i in failing if frame.at[i, "Max abs err"]}
    worst_row = max(errs, key=errs.get) if errs else (failing[0] if failing else None)
    styled = frame.style.apply(_row_style, axis=1, worst_row=worst_row)
    empty = [c for c in ("Max abs err", "Worst entry", "Message") if not frame[c].astype(bool).any()]
    st.dataframe(styled, hide_index=True, width="stretch", height=min(35 * len(frame) + 38, 520), key="cases-table",
                 column_order=[c for c in frame.columns if c not in empty],  # nothing to say: no column for it
                 # "Worst entry" right after the output it is about and the Message after it, each as wide as its
                 # longest text (issue 32: at 1400 px the worst entry was cut off at the right edge; issue 46: the
                 # message); Expected and Got, often whole arrays, come last, their full values in the expander below
                 column_config={"Result": st.column_config.TextColumn(width=70),
                                "Case": st.column_config.TextColumn(width=90),
                                "Output": st.column_config.TextColumn(width=90),
                                "Worst entry": st.column_config.TextColumn(width=worst_width(frame)),
                                "Max abs err": st.column_config.TextColumn(width=90),
                                "Expected": st.column_config.TextColumn(width=190),
                                "Got": st.column_config.TextColumn(width=190),
                                "Message": st.column_config.TextColumn(width=column_width(frame, "Message", 900))})
    visible = [c for c in report.cases if not c.hidden and c.inputs]
    if visible:
        with st.expander("Inputs and full values of the examples"):
            for case in visible:
                _case_detail(case)


def _case_detail(case: CaseResult) -> None:
    st.markdown(f"**{case.name}**")
    st.code(fmt_inputs(case.inputs), language=None, wrap_lines=True)
    for leaf in case.leaves:
        if not leaf.passed and leaf.got is not None:
            st.code(f"{leaf.path}\n  expected {json.dumps(leaf.expected)}\n  got      {json.dumps(leaf.got)}",
                    language=None, wrap_lines=True)


def cases_summary(report: Report) -> str:
    parts = []
    for label, hidden in (("Examples", False), ("Hidden cases", True)):
        group = [c for c in report.cases if c.hidden is hidden]
        if group:
            parts.append(f"{label}: {sum(c.passed for c in group)}/{len(group)} passed")
    return " · ".join(parts)


def requirements_checklist(requirements: list[RequirementResult], note: str = "", checked: bool = True,
                           forecast: str = "") -> None:
    """Each requirement's sentence with ✓/✗, the check's message and links to its equations in the jaxpr;
    ``forecast``: what a Run's program already says about a check left to Submit (``block_hint``)."""
    for req in requirements:
        unchecked = not checked or not getattr(req, "checked", True)  # (a TPU compile row without the extra)
        if getattr(req, "advice", False):  # shown with what the grader saw; it never decides the verdict
            mark = ":blue[**ℹ advice**]"
        else:
            mark = ":gray[**○**]" if unchecked else ":green[**✓**]" if req.passed else ":red[**✗**]"
        with st.container(border=True, key=f"req-{req.id}"):
            st.markdown(f"{mark} **`{req.id}`** {req.text}")
            st.markdown(md(req.message))
            if forecast and unchecked and req.id == "compiles-for-tpu-v5e":
                st.warning(md(forecast), icon=":material/grid_on:")
            jumps = jaxpr_view.jumps_html([req])
            if jumps:
                st.html(jumps.replace('class="jaxplay-jumps"', 'class="jaxplay-jumps" title="Show in the jaxpr tab"'))
    if note:
        st.caption(note)


CONSOLE_HEIGHT = 280  # px: a box that scrolls, whatever the program printed
CONSOLE_CHARS = 200_000  # characters drawn in a box (the browser slows down past that); Download has the rest


def console(report: Report) -> None:
    """stdout, stderr and traceback as plain text in boxes of bounded height, each downloadable whole."""
    shown = False
    if report.output_truncated:  # said first: the end of a long box is far from sight
        st.caption(":material/content_cut: Output cut: your program printed more than the grader keeps; the start "
                   "of it is shown below.")
    for title, text in (("Traceback", report.traceback), ("stdout", report.stdout), ("stderr", report.stderr)):
        if text.strip():
            head = st.columns([4, 1], vertical_alignment="bottom")
            head[0].markdown(f"**{title}** · {len(text.splitlines())} lines")
            head[1].download_button("Download", text, file_name=f"{title.lower()}.txt", mime="text/plain",
                                    key=f"download-{title}", icon=":material/download:", width="stretch")
            shown_text = text if len(text) <= CONSOLE_CHARS else text[:CONSOLE_CHARS]
            if shown_text is not text:
                st.caption(f"The first {CONSOLE_CHARS // 1000} thousand characters of {len(text):,}; "
                           "Download has all of it.")
            # Bounded by characters as well as lines: one very long line wraps into thousands of rows.
            long = shown_text.count("\n") > 12 or len(shown_text) > 1200
            st.code(shown_text, language=None, wrap_lines=True, height=CONSOLE_HEIGHT if long else "content")
            shown = True
    if not shown:
        st.caption("Your code printed nothing.")


def error_line(report: Report) -> int | None:
    """The submission's line where a syntax error or exception was raised, if the report says."""
    if report.verdict is Verdict.SYNTAX_ERROR:
        m = re.search(r"on line (\d+)", unmarked(report.message))
        return int(m.group(1)) if m else None
    lines = re.findall(r'File "solution.py", line (\d+)', report.traceback or "")
    return int(lines[-1]) if lines else None
