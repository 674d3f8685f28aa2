"""The charts of a cost measurement as plain data, for the Cost tab (no Streamlit here).

``chart_data(report)`` takes ``CostReport.to_json()`` (or the CLI's JSON) and gives, for each chart the problem
declares, its title, takeaway, kind (``line`` against the swept size, ``bar`` per program), axis labels with
units, and the values already scaled to that unit; ``Chart.wide()`` is the pandas frame ``st.line_chart`` /
``st.bar_chart`` take as is (index: the x axis, one column per program). ``series_colour`` is the one palette
every chart draws with: a program keeps its colour on the CPU chart, the TPU chart and the kernel chart.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from problems.insight import METRICS

BYTE_UNITS = (("GiB", 1 << 30, 1 << 30), ("MiB", 1 << 20, 1 << 20), ("KiB", 1 << 10, 1 << 10), ("bytes", 1, 0))
COUNT_UNITS = (("billions", 1e9, 1e10), ("millions", 1e6, 1e7), ("thousands", 1e3, 1e4), ("", 1, 0))
"""(unit, divisor, from which largest value on): a count is shown in millions from ten million on, ..."""

ROLE_COLOURS = {"learner": "#d55e00", "reference": "#0072b2", "baseline": "#8c8c8c"}
"""The learner's program (``your code``, ``your kernel``), the reference and the naive baseline (``no
checkpoint``, the ``jnp`` version): the same colour on every chart (Okabe and Ito's palette, which reads with
every common colour blindness, in light and dark mode alike)."""
PALETTE = ("#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#b8a000", "#882255", "#44aa99", "#999933")
"""The problem's other programs (``[[compare]]``), in the order the problem declares them."""


def series_colour(program: str, others: list[str] | tuple[str, ...] = ()) -> str:
    """The colour of the program named ``program`` (``learner``, ``reference``, ``baseline`` or a compared
    program's name, its place in ``others``, the problem's compared programs in their declared order).
    Issue 46: each chart had coloured its series by their order in it, so "your code" was pink on the CPU
    chart, orange on the TPU chart and red on the kernel chart."""
    if program in ROLE_COLOURS:
        return ROLE_COLOURS[program]
    at = list(others).index(program) if program in others else sum(map(ord, program))
    return PALETTE[at % len(PALETTE)]


@dataclass
class Chart:
    title: str
    takeaway: str
    kind: str
    """``line`` (x: the swept size) or ``bar`` (x: the program)."""
    metric: str
    x_label: str
    y_label: str
    """The metric's name with the unit the values are in, e.g. ``temporary memory (MiB)``."""
    unit: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    """Long form: ``{"x": 8 or "no checkpoint", "program": title, "value": 6.1, "measured_once": bool}``."""
    missing: list[str] = field(default_factory=list)
    """Programs that could not be measured (their error), left out of the chart."""
    log_scale: bool = False
    """The values span two orders of magnitude or more: a logarithmic y axis reads better."""
    colours: dict[str, str] = field(default_factory=dict)
    """Each series (a row's ``program``) -> its colour (``series_colour``)."""

    def wide(self):
        """A pandas DataFrame for ``st.line_chart``/``st.bar_chart``. A line chart: index the swept size, one
        column per program; a bar chart: index the programs, one column (``y_label``)."""
        import pandas as pd
        if not self.rows:
            return pd.DataFrame()
        if self.kind == "bar":
            frame = pd.DataFrame({self.y_label: [r["value"] for r in self.rows]}, index=[r["x"] for r in self.rows])
        else:
            frame = pd.DataFrame(self.rows).pivot_table(index="x", columns="program", values="value", sort=False)
            frame = frame[list(dict.fromkeys(r["program"] for r in self.rows))]
            frame.columns.name = None
        frame.index.name = self.x_label
        return frame


def _unit(metric: str, values: list[float]) -> tuple[str, float]:
    top = max((abs(v) for v in values), default=0.0)
    units = BYTE_UNITS if metric.endswith("_bytes") else COUNT_UNITS
    for name, divisor, threshold in units:
        if top >= threshold:
            return name, divisor
    return units[-1][:2]


def _label(metric: str, unit: str) -> str:
    base = METRICS.get(metric, metric)
    if metric.endswith("_bytes"):
        return base.replace("(bytes)", f"({unit})")
    return f"{base} ({unit})" if unit else base


def chart_data(report: dict[str, Any]) -> list[Chart]:
    """One ``Chart`` per chart the problem declares, from a cost report's JSON."""
    programs = report.get("programs", [])
    sweep = report.get("sweep_name", "")
    others = list(dict.fromkeys(p["program"] for p in programs if p.get("program") not in ROLE_COLOURS))
    names = {p["title"]: p["program"] for p in programs}
    charts = []
    for spec in report.get("charts", []):
        metric, over = spec["metric"], spec["over"]
        raw: list[dict[str, Any]] = []
        missing = []
        if over == "programs":
            for p in programs:
                if p.get("at"):
                    continue
                if not p.get("ok") or p.get(metric) is None:
                    missing.append(f"{p['title']}: {p.get('error') or 'not measured'}")
                    continue
                raw.append({"x": p["title"], "program": p["title"], "value": float(p[metric]),
                            "measured_once": False})
        else:
            swept = {p["program"] for p in programs if p.get("at")}
            points = sorted({p["at"][sweep] for p in programs if p.get("at")})
            for p in programs:
                if p["program"] in swept and not p.get("at"):
                    continue  # the declared size is also a sweep point, measured there
                if not p.get("ok") or p.get(metric) is None:
                    if not p.get("at") or p["program"] in swept:
                        missing.append(f"{p['label']}: {p.get('error') or 'not measured'}")
                    continue
                if p.get("at"):
                    raw.append({"x": p["at"][sweep], "program": p["title"], "value": float(p[metric]),
                                "measured_once": False})
                else:  # a program that does not depend on the swept size: the same at every point
                    raw += [{"x": x, "program": f"{p['title']} (measured once)", "value": float(p[metric]),
                             "measured_once": True} for x in points]
            rank = {p["title"]: i for i, p in enumerate(q for q in programs if not q.get("at"))}
            raw.sort(key=lambda r: (r["x"], rank.get(r["program"].replace(" (measured once)", ""), 99)))
        unit, scale = _unit(metric, [r["value"] for r in raw])
        for r in raw:
            r["value"] = r["value"] / scale
        positive = [r["value"] for r in raw if r["value"] > 0]
        log_scale = bool(positive) and max(positive) >= 100 * min(positive)
        colours = {r["program"]: series_colour(names.get(r["program"].replace(" (measured once)", ""), ""), others)
                   for r in raw}
        charts.append(Chart(title=spec["title"], takeaway=spec["takeaway"], kind="bar" if over == "programs" else "line",
                            metric=metric, x_label="program" if over == "programs" else sweep,
                            y_label=_label(metric, unit), unit=unit, rows=raw, missing=missing, log_scale=log_scale,
                            colours=colours))
    return charts
