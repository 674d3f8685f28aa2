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
from typing import TYPE_CHECKING

import streamlit as st

from grader.cost.charts import Chart, chart_data
from grader.cost.records import CostReport
from grader.cost.targets import TARGETS, available
from grader.grading.numbers import figure
from grader.records import learner
from pages.services import progress, runs
from pages.services.browser_bridge import new_click
from pages.views.markup import md
from problems import Problem

if TYPE_CHECKING:  # imported where they are used: a server's first page view does without them
    import altair as alt
    import pandas as pd

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
    task = runs.current_background("cost")  # a measurement never holds up Run, Submit or Reset (issue 32)
    busy = task is not None
    code = progress.code(problem.slug) or problem.starter
    key = f"cost-run-{problem.slug}"
    pressed = st.button(BUTTON, key=key, disabled=busy, icon=":material/monitoring:",
                        help="Measuring runs in the background: keep editing, Run and Submit meanwhile.")
    click = new_click(problem.slug, st.session_state.get("jaxplay_last_flush"), (key,))  # survives a cut-off run
    if (pressed or click is not None) and not busy:
        code = click[1] if click is not None else code
        if _cached(problem, code, target) is None:
            runs.start(problem.slug, "cost", code, lambda task: runs.get_runner(
                on_position=lambda ahead: setattr(task, "ahead", ahead),
                on_progress=lambda text: setattr(task, "progress", str(text)[:200]),
            ).cost(problem, code, small=SMALL, target=target))
            st.rerun()
    if task is not None:
        if task.slug == problem.slug:
            _compiling(target, task)
            return
        st.caption(f"Measuring another problem ({task.slug}); this one can be measured when it is done.")
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


def _compiling(target: str, started: runs.Task) -> None:
    """The measurement's progress, refreshed every second, in the background: the programs compiled and those
    left (the child's word), the time so far; the page is drawn again when the figures are in."""
    label = TARGETS[target].label

    @st.fragment(run_every=1.0)
    def live() -> None:
        task = runs.current_background("cost")
        if task is not started:
            st.rerun()  # done: the whole page, with the figures
        ahead = f" ({task.ahead} run{'s' if task.ahead != 1 else ''} ahead of yours)" if task.ahead else ""
        now = f" · {md(learner(task.progress))}" if task.progress else ""  # the child's word: shown as sent
        with st.container(key="cost-progress"):
            with st.status(f"Measuring for {label}{ahead}… {task.elapsed():.0f} s{now}", state="running",
                           expanded=True):
                st.caption("The problem's own programs (reference, baseline) are planned once and kept; only "
                           "your programs compile now, side by side. Keep editing, Run and Submit meanwhile."
                           if TARGETS[target].platform != "cpu" else
                           "Every program is compiled, none is run. Keep editing, Run and Submit meanwhile.")
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


PLOT_HEIGHT = 320
"""Pixels of a line chart's plot area (issue 32: 220-240 px read as a strip); its axis titles, labels and
legend come on top of it."""
BAR_HEIGHT = 52
"""Pixels per program in a bar chart."""
TICKS = 5
"""About this many ticks on a value axis (issue 32: a logarithmic axis drew 30 labels)."""
FONT = 14
"""Axis labels and titles, in pixels (they were 12 and cramped)."""


def _with_unit(value: float, unit: str) -> str:
    return figure(value, unit)  # the one formatter of the tables, the labels and the messages (issue 46)


def _wrapped(title: str, width: int = 36) -> list[str]:
    """An axis title as lines of at most about ``width`` characters (one long line ran off a phone's screen)."""
    import textwrap
    return textwrap.wrap(title, width) or [title]


def nice_step(span: float, count: int = TICKS) -> float:
    """A round step (1, 2 or 5 times a power of ten) that cuts ``span`` into about ``count`` pieces."""
    import math
    raw = span / max(count, 1)
    if raw <= 0 or raw != raw:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def value_axis(values: list[float], log: bool = False) -> tuple[list[float], list[float]]:
    """(domain, tick values) of a value axis that fits the data (issue 32: it ran to about twice the largest
    value): linear, from zero (or the smallest negative) to the largest value rounded up to the next of about
    ``TICKS`` round ticks; logarithmic, from just below the smallest to just above the largest value, ticked at
    the powers of ten inside (and 2 and 5 times them when there are fewer than three)."""
    import math
    finite = [v for v in values if v == v and abs(v) != float("inf")]
    if log:
        positive = [v for v in finite if v > 0] or [1.0]
        low, top = min(positive) / 1.25, max(positive) * 1.25
        ticks = [10.0 ** k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(top)) + 1)
                 if low <= 10.0 ** k <= top]
        if len(ticks) < 3:
            ticks = sorted({m * 10.0 ** k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(top)) + 1)
                            for m in (1, 2, 5) if low <= m * 10.0 ** k <= top})
        return [low, top], ticks
    low, top = min(0.0, min(finite, default=0.0)), max(finite, default=1.0)
    if top <= low:
        top = low + 1.0
    step = nice_step(top - low)
    start, end = math.floor(low / step) * step, math.ceil(top / step) * step
    ticks = [round(start + i * step, 12) for i in range(int(round((end - start) / step)) + 1)]
    return [start, end], ticks


def _value_scale(chart: Chart, values: list[float]) -> tuple[alt.Scale, alt.Axis]:
    import altair as alt
    domain, ticks = value_axis(values, chart.log_scale)
    scale = alt.Scale(type="log", domain=domain, nice=False) if chart.log_scale else \
        alt.Scale(domain=domain, nice=False, zero=True)
    return scale, alt.Axis(values=ticks, format=",.4~g", labelFontSize=FONT,
                           titleFontSize=FONT, labelOverlap=True)


def _line(base: alt.Chart, chart: Chart, values: list[float], points: list[float]) -> alt.Chart:
    """The swept size on x (logarithmic, ticked at the measured sizes, when they grow by doubling or more), the
    learner's line solid and on top of the dashed others (where they coincide, both stay visible)."""
    import altair as alt
    positive = [x for x in points if x > 0]
    doubling = len(positive) == len(points) >= 3 and positive[-1] >= 8 * positive[0]
    x_scale = alt.Scale(type="log", base=2, nice=False, padding=12) if doubling else alt.Scale(zero=False, padding=12)
    x = alt.X("x:Q", title=chart.x_label, scale=x_scale,
              axis=alt.Axis(values=points, format=",.6~g", labelFlush=False, grid=True, labelFontSize=FONT) if doubling
              else alt.Axis(format=",.6~g", tickCount=TICKS, labelFontSize=FONT))
    mine = alt.datum.series == "your code"
    y_scale, y_axis = _value_scale(chart, values)
    encoding = dict(
        x=x, y=alt.Y("value:Q", title=_wrapped(chart.y_label), scale=y_scale, axis=y_axis),
        # one entry per line above the plot: a row of them is cut to its first entry on a phone
        color=alt.Color("series:N", title=None, scale=_colours(chart),
                        legend=alt.Legend(orient="top", direction="vertical", labelLimit=280)),
        tooltip=[alt.Tooltip("series:N", title="program"), alt.Tooltip("x:Q", title=chart.x_label),
                 alt.Tooltip("label:N", title=chart.y_label)])
    lines = base.mark_line(point=True).encode(
        strokeDash=alt.condition(mine, alt.value([1, 0]), alt.value([6, 4])),
        strokeWidth=alt.condition(mine, alt.value(3), alt.value(2)),
        order=alt.condition(mine, alt.value(1), alt.value(0)), **encoding)
    return lines.properties(height=PLOT_HEIGHT)


def _bars(base: alt.Chart, chart: Chart, values: list[float], count: int) -> alt.Chart:
    """One horizontal bar per program, its name and its value with the unit on the left ("reference (scan) ·
    6.0 MiB"): names and values stay readable at any width, on a phone too, and the axis ends at the data
    (a label beside the bar had needed room past the longest one)."""
    import altair as alt
    y = alt.Y("name:N", title=None, sort=None, axis=alt.Axis(labelLimit=320, labelFontSize=FONT))
    scale, axis = _value_scale(chart, values)
    x = alt.X("value:Q", title=_wrapped(chart.y_label), scale=scale, axis=axis)
    tooltip = [alt.Tooltip("x:N", title="program"), alt.Tooltip("label:N", title=chart.y_label)]
    bars = base.transform_calculate(name="datum.x + ' · ' + datum.label").mark_bar().encode(
        x=x, y=y, color=alt.Color("x:N", legend=None, scale=_colours(chart)), tooltip=tooltip)
    return bars.properties(height=max(BAR_HEIGHT * count, 120))


def _colours(chart: Chart) -> alt.Scale:
    """Each series in its own colour from the one palette (``grader.cost.charts.series_colour``), the same on
    every chart, whatever else the chart draws."""
    import altair as alt
    if not chart.colours:
        return alt.Scale()
    return alt.Scale(domain=list(chart.colours), range=list(chart.colours.values()))


def _chart(chart: Chart) -> None:
    import altair as alt
    import pandas as pd
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
        st.altair_chart(figure.configure_axis(titleLimit=0, labelLimit=320, labelFontSize=FONT, titleFontSize=FONT)
                        .configure_legend(labelFontSize=FONT), width="stretch")
    for why in chart.missing:
        st.caption(md(f"Not in the chart: {learner(why)}"))
    st.caption(md(chart.takeaway))


def _table(report: CostReport) -> None:
    import pandas as pd
    rows = []
    for p in report.programs:
        if p.at:
            continue
        rows.append({"program": p.title, "peak (MiB)": _mib(p.peak_bytes),
                     "temporary (MiB)": _mib(p.temp_bytes), "arguments (MiB)": _mib(p.argument_bytes),
                     "outputs (MiB)": _mib(p.output_bytes),
                     "GFLOP": figure(None if p.flops is None else p.flops / 1e9),
                     "saved for backward (MiB)": _mib(p.residual_bytes),
                     "note": "" if p.ok else f"not measured: {p.error}"})
    if rows:
        with st.expander("Every program at the declared size"):
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _residuals(report: CostReport) -> None:
    import pandas as pd
    mine = report.program("learner")
    if mine is None or mine.residual_bytes is None or not mine.residuals:
        return
    with st.expander(f"What your backward pass keeps: {len(mine.residuals)} residuals, "
                     f"{_mib(mine.residual_bytes)} MiB"):
        st.dataframe(pd.DataFrame([{"name": r.name, "shape": str(tuple(r.shape)), "dtype": r.dtype,
                                    "KiB": figure(r.bytes / 1024), "your line": str(r.line) if r.line else "",
                                    "code": r.code} for r in mine.residuals]),
                     hide_index=True, width="stretch")


def _mib(n: int | float | None) -> str:
    return figure(None if n is None else n / (1 << 20))
