"""The Cost tab: what the learner's structure buys, measured by XLA at the problem's realistic size.

A measurement is its own button and its own job on the grading pool, or on a grading worker when the app
sends its gradings to a queue (``Grading.cost``: ``grader.cost.measure_cost`` with limits of its own), so Run
and Submit stay as fast as they are; it waits in the same queue as everyone's runs. The
charts come from ``grader.cost_charts.chart_data``; every figure is XLA's on this server's CPU.
"""
from __future__ import annotations

import os

import altair as alt
import pandas as pd
import streamlit as st

from grader.cost_charts import Chart, chart_data
from grader.cost_records import CostReport
from grader.records import learner
from pages import progress, runs
from pages.markup import md
from problems import Problem

BUTTON = "Measure cost"
SMALL = os.environ.get("JAXPLAY_COST_SIZE", "") == "small"
"""Measure at each insight's small (test) size instead of its realistic one: the browser tests' setting."""


def cost_tab(problem: Problem) -> None:
    insight = problem.insight
    if insight is None:  # the tab is only shown for problems that declare one
        return
    sizes = ", ".join(f"{k} = {v:,}" for k, v in (dict(insight.sizes, **insight.small) if SMALL else
                                                  insight.sizes).items())
    st.caption(f"Compile your function, the reference and the naive version at a realistic size ({sizes}) and "
               "compare what XLA says they cost: memory, FLOPs and, where a checkpoint is involved, what the "
               "backward pass keeps. Nothing runs at that size; compiling takes a little while.")
    busy = runs.current() is not None
    key = f"cost-run-{problem.slug}"
    if st.button(BUTTON, key=key, disabled=busy, icon=":material/monitoring:"):
        code = progress.code(problem.slug) or problem.starter
        runs.start(problem.slug, "cost", code, lambda task: runs.get_runner(
            on_position=lambda ahead: setattr(task, "ahead", ahead)).cost(problem, code, small=SMALL))
        st.rerun()
    task = runs.current()
    if task is not None and task.kind == "cost" and task.slug == problem.slug:
        ahead = f" ({task.ahead} run{'s' if task.ahead != 1 else ''} ahead of yours)" if task.ahead else ""
        st.info(f"Compiling and measuring{ahead}…", icon=":material/hourglass_top:")
        return
    done = runs.last(problem.slug, "cost")
    if done is None:
        return
    try:
        report: CostReport = done.result()
    except Exception as exc:  # noqa: BLE001 - the pool refusing (busy) or the grader failing: say so
        st.error(md(f"The measurement could not run ({learner(f'{type(exc).__name__}: {exc}')}). "
                    "Try again in a moment."))
        return
    draw(report)


def draw(report: CostReport) -> None:
    """One cost report: its error, or its summary, charts with their takeaways, the table and residuals."""
    if not report.ok:
        st.error(md(f"Your code could not be measured at this size: {learner(report.error)}"))
        if report.traceback:
            st.code(report.traceback, language=None)
        return
    if report.summary:
        st.markdown(md(report.summary))
    for chart in chart_data(report.to_json()):
        _chart(chart)
    _table(report)
    _residuals(report)
    st.caption(report.note)


def _chart(chart: Chart) -> None:
    st.markdown(f"**{chart.title}**")
    frame = chart.wide()
    if frame.empty:
        st.caption("Nothing could be measured for this chart.")
    else:
        scale = alt.Scale(type="log") if chart.log_scale else alt.Scale()
        # long form under fixed column names: a bar chart's index is itself called "program" and its one
        # column is named after the y label, so neither may be reused for the melted columns
        long = frame.rename_axis("x").reset_index().melt(id_vars="x", var_name="series", value_name="value")
        base = alt.Chart(long)
        if chart.kind == "line":
            mine = alt.datum.series == "your code"
            # the learner's line solid and on top, the others dashed: where they coincide (the reference in
            # the editor) both stay visible
            figure = base.mark_line(point=True).encode(
                x=alt.X("x:Q", title=chart.x_label), y=alt.Y("value:Q", title=chart.y_label, scale=scale),
                color=alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=400)),
                strokeDash=alt.condition(mine, alt.value([1, 0]), alt.value([6, 4])),
                strokeWidth=alt.condition(mine, alt.value(3), alt.value(2)),
                order=alt.condition(mine, alt.value(1), alt.value(0))).properties(height=260)
        else:
            # one horizontal bar per program, its name on the left and its value at the end: names stay
            # readable at any width, on a phone too
            y = alt.Y("x:N", title=None, sort=None, axis=alt.Axis(labelLimit=240))
            x = alt.X("value:Q", title=chart.y_label, scale=scale)
            bars = base.mark_bar().encode(x=x, y=y, color=alt.Color("x:N", legend=None))
            values = base.mark_text(align="left", dx=4).encode(x=x, y=y, text=alt.Text("value:Q", format=",.4~g"))
            figure = (bars + values).properties(height=40 * len(frame.index) + 20)
        st.altair_chart(figure, width="stretch")
    for why in chart.missing:
        st.caption(md(f"Not in the chart: {learner(why)}"))
    st.caption(md(chart.takeaway))


def _table(report: CostReport) -> None:
    rows = []
    for p in report.programs:
        if p.at:
            continue
        rows.append({"program": p.title,
                     "temporary (MiB)": _mib(p.temp_bytes), "arguments (MiB)": _mib(p.argument_bytes),
                     "outputs (MiB)": _mib(p.output_bytes),
                     "GFLOP": None if p.flops is None else round(p.flops / 1e9, 3),
                     "saved for backward (MiB)": _mib(p.residual_bytes),
                     "note": "" if p.ok else f"not measured: {p.error}"})
    if rows:
        with st.expander("Every program at the declared size"):
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _residuals(report: CostReport) -> None:
    mine = report.program("learner")
    if mine is None or mine.residual_bytes is None or not mine.residuals:
        return
    with st.expander(f"What your backward pass keeps: {len(mine.residuals)} residuals, "
                     f"{_mib(mine.residual_bytes)} MiB"):
        st.dataframe(pd.DataFrame([{"name": r.name, "shape": str(tuple(r.shape)), "dtype": r.dtype,
                                    "KiB": round(r.bytes / 1024, 1), "your line": str(r.line) if r.line else "",
                                    "code": r.code} for r in mine.residuals]),
                     hide_index=True, width="stretch")


def _mib(n: int | float | None) -> float | None:
    return None if n is None else round(n / (1 << 20), 2)
