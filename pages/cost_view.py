"""The Cost tab: what the learner's structure buys, measured by XLA at the problem's realistic size.

A measurement is its own button and its own job on the grading pool, or on a grading worker when the app
sends its gradings to a queue (``Grading.cost``: ``grader.cost.measure.measure_cost`` with limits of its own), so Run
and Submit stay as fast as they are; it waits in the same queue as everyone's runs. The
charts come from ``grader.cost.charts.chart_data``; every figure is XLA's, for this server's CPU or, where
the TPU extra is installed and the learner picks it, a TPU compiled for ahead of time
(``grader/cost/targets.py``). Each report is kept for the session by code, size and target, so switching
targets back and forth, or pressing the button again on the same code, compiles nothing again.
"""
from __future__ import annotations

import hashlib
import os

import altair as alt
import pandas as pd
import streamlit as st

from grader.cost.charts import Chart, chart_data
from grader.cost.records import CostReport
from grader.cost.targets import TARGETS, available
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
    target = _target_choice(problem)
    busy = runs.current() is not None
    code = progress.code(problem.slug) or problem.starter
    key = f"cost-run-{problem.slug}"
    if st.button(BUTTON, key=key, disabled=busy, icon=":material/monitoring:"):
        if _cached(problem, code, target) is None:
            runs.start(problem.slug, "cost", code, lambda task: runs.get_runner(
                on_position=lambda ahead: setattr(task, "ahead", ahead),
                on_progress=lambda text: setattr(task, "progress", str(text)[:200]),
            ).cost(problem, code, small=SMALL, target=target))
            st.rerun()
    task = runs.current()
    if task is not None and task.kind == "cost" and task.slug == problem.slug:
        _compiling(target)
        return
    done = runs.last(problem.slug, "cost")
    last: CostReport | None = None
    if done is not None:
        try:
            last = done.result()
        except Exception as exc:  # noqa: BLE001 - the pool refusing (busy) or the grader failing: say so
            st.error(md(f"The measurement could not run ({learner(f'{type(exc).__name__}: {exc}')}). "
                        "Try again in a moment."))
            return
        _remember(problem, done.code, last)
    report = _cached(problem, code, target)
    if report is None and last is not None and last.target == target and done.code == code:
        report = last  # a failure of ours, not kept
    if report is None and last is not None:
        report = _cached(problem, done.code, target)
        if report is None:
            st.caption(f"Not measured for {TARGETS[target].label} yet: press **{BUTTON}**.")
            return
        st.caption("Measured for an earlier version of your code: press the button to measure this one.")
    if report is not None:
        draw(report)


def _compiling(target: str) -> None:
    """A spinner with the compile's progress (the program the child compiles, of how many), refreshed twice a
    second; the page is drawn again when the measurement is done."""
    label = TARGETS[target].label

    @st.fragment(run_every=0.5)
    def live() -> None:
        task = runs.current()
        if task is None or task.kind != "cost":
            st.rerun()
        ahead = f" ({task.ahead} run{'s' if task.ahead != 1 else ''} ahead of yours)" if task.ahead else ""
        now = f" · {md(learner(task.progress))}" if task.progress else ""  # the child's word: shown as sent
        with st.container(key="cost-progress"):
            with st.status(f"Compiling for {label}{ahead}… {task.elapsed():.0f} s{now}", state="running"):
                st.caption("A TPU compile of every program at this size takes up to a minute on a busy server."
                           if TARGETS[target].platform != "cpu" else "Every program is compiled, none is run.")
    live()


def _target_choice(problem: Problem) -> str:
    """The target the learner picked: a choice only where the TPU extra is installed, else this machine."""
    targets = [t.name for t in available()]
    if len(targets) == 1:
        return targets[0]
    shown = [n for n in targets if n in ("cpu", "tpu-v5e")]  # the tab offers the two the README explains
    return st.radio("Compile for", shown, format_func=lambda n: TARGETS[n].label, horizontal=True,
                    key=f"cost-target-{problem.slug}",
                    help="A TPU is compiled for ahead of time on this server (libtpu), no TPU needed: the "
                         "figures are its compiler's plan for one chip.")


def _cache_key(problem: Problem, code: str, target: str) -> tuple[str, str, bool, str]:
    return (problem.slug, hashlib.sha256(code.encode()).hexdigest(), SMALL, target)


def _cached(problem: Problem, code: str, target: str) -> CostReport | None:
    return st.session_state.get("cost-reports", {}).get(_cache_key(problem, code, target))


def _remember(problem: Problem, code: str, report: CostReport) -> None:
    """Keep a report for its code, size and target (a failure of ours is not kept: the button tries again)."""
    if report.error_kind in ("grader", "missing_extra"):
        return
    reports = st.session_state.setdefault("cost-reports", {})
    reports[_cache_key(problem, code, report.target)] = report
    while len(reports) > 24:  # the oldest go first
        reports.pop(next(iter(reports)))


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


PLOT_HEIGHT = 240
"""Pixels of a chart's plot area; its axis titles, labels and legend come on top of it."""
TICKS = 5
"""About this many ticks on a value axis, whose top is rounded up to one of them."""


def _with_unit(value: float, unit: str) -> str:
    if value != value:
        return ""
    text = f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{text} {unit}" if unit else text


def _wrapped(title: str, width: int = 36) -> list[str]:
    """An axis title as lines of at most about ``width`` characters (one long line ran off a phone's screen)."""
    import textwrap
    return textwrap.wrap(title, width) or [title]


def _value_scale(chart: Chart, values: list[float], headroom: float) -> alt.Scale:
    """The value axis: from zero (or logarithmic where the values span orders of magnitude) to past the largest
    value, so that nothing sits above the top tick and a bar's label fits beside it."""
    top = max(values, default=1.0) or 1.0
    if chart.log_scale:
        low = min((v for v in values if v > 0), default=top / 100)
        return alt.Scale(type="log", domain=[low / 2, top * (2 if headroom > 1 else 1.5)], nice=False)
    return alt.Scale(domain=[min(0.0, min(values, default=0.0)), top * headroom], nice=TICKS, zero=True)


def _line(base: alt.Chart, chart: Chart, values: list[float], points: list[float]) -> alt.Chart:
    """The swept size on x (logarithmic, ticked at the measured sizes, when they grow by doubling or more), the
    learner's line solid and on top of the dashed others (where they coincide, both stay visible)."""
    positive = [x for x in points if x > 0]
    doubling = len(positive) == len(points) >= 3 and positive[-1] >= 8 * positive[0]
    x_scale = alt.Scale(type="log", base=2, nice=False, padding=12) if doubling else alt.Scale(zero=False, padding=12)
    x = alt.X("x:Q", title=chart.x_label, scale=x_scale,
              axis=alt.Axis(values=points, format="~g", labelFlush=False, grid=True) if doubling else alt.Axis(format="~g"))
    mine = alt.datum.series == "your code"
    encoding = dict(
        x=x, y=alt.Y("value:Q", title=_wrapped(chart.y_label), scale=_value_scale(chart, values, 1.08), axis=alt.Axis(tickCount=TICKS)),
        # one entry per line above the plot: a row of them is cut to its first entry on a phone
        color=alt.Color("series:N", title=None, legend=alt.Legend(orient="top", direction="vertical", labelLimit=280)),
        tooltip=[alt.Tooltip("series:N", title="program"), alt.Tooltip("x:Q", title=chart.x_label),
                 alt.Tooltip("label:N", title=chart.y_label)])
    lines = base.mark_line(point=True).encode(
        strokeDash=alt.condition(mine, alt.value([1, 0]), alt.value([6, 4])),
        strokeWidth=alt.condition(mine, alt.value(3), alt.value(2)),
        order=alt.condition(mine, alt.value(1), alt.value(0)), **encoding)
    return lines.properties(height=PLOT_HEIGHT)


def _bars(base: alt.Chart, chart: Chart, values: list[float], count: int) -> alt.Chart:
    """One horizontal bar per program, its name on the left and its value with the unit at its end: names stay
    readable at any width, on a phone too."""
    y = alt.Y("x:N", title=None, sort=None, axis=alt.Axis(labelLimit=240))
    # room beside the longest bar for its label, on a phone too
    longest = max((len(_with_unit(v, chart.unit)) for v in values), default=6)
    x = alt.X("value:Q", title=_wrapped(chart.y_label), scale=_value_scale(chart, values, 1.15 + 0.04 * longest))
    tooltip = [alt.Tooltip("x:N", title="program"), alt.Tooltip("label:N", title=chart.y_label)]
    bars = base.mark_bar().encode(x=x, y=y, color=alt.Color("x:N", legend=None), tooltip=tooltip)
    labels = base.mark_text(align="left", dx=4).encode(x=x, y=y, text="label:N")
    return (bars + labels).properties(height=max(36 * count, 72))


def _chart(chart: Chart) -> None:
    st.markdown(f"**{chart.title}**")
    frame = chart.wide()
    if frame.empty:
        st.caption("Nothing could be measured for this chart.")
    else:
        values = [float(v) for v in frame.to_numpy().ravel() if v == v]
        long = frame.rename_axis("x").reset_index().melt(id_vars="x", var_name="series", value_name="value")
        # each bar and point says its value with its unit ("6.0 MiB", not "6.004" beside an axis in MiB)
        long["label"] = [_with_unit(v, chart.unit) for v in long["value"]]
        base = alt.Chart(long)
        if chart.kind == "line":
            figure = _line(base, chart, values, sorted({float(x) for x in frame.index}))
        else:
            figure = _bars(base, chart, values, len(frame.index))
        # fit the width only: Streamlit's default autosize ("fit") squeezes the axes, their titles and the legend
        # into the height too, which left a plot about 80 px tall and clipped the y axis's title
        figure = figure.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
        st.altair_chart(figure.configure_axis(titleLimit=0, labelLimit=240), width="stretch")
    for why in chart.missing:
        st.caption(md(f"Not in the chart: {learner(why)}"))
    st.caption(md(chart.takeaway))


def _table(report: CostReport) -> None:
    rows = []
    for p in report.programs:
        if p.at:
            continue
        rows.append({"program": p.title, "peak (MiB)": _mib(p.peak_bytes),
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
