"""The charts of a cost measurement as plain data, for the Cost tab (no Streamlit here).

``chart_data(report)`` takes ``CostReport.to_json()`` (or the CLI's JSON) and gives, for each chart the problem
declares, its title, takeaway, kind (``line`` against the swept size, ``bar`` per program), axis labels with
units, and the values already scaled to that unit; ``Chart.wide()`` is the pandas frame ``st.line_chart`` /
``st.bar_chart`` take as is (index: the x axis, one column per program).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from problems.insight import METRICS

BYTE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("bytes", 1))
COUNT_UNITS = (("billions", 1e9), ("millions", 1e6), ("thousands", 1e3), ("", 1))


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

    def wide(self):
        """A pandas DataFrame: index the x axis (named ``x_label``), one column per program."""
        import pandas as pd
        if not self.rows:
            return pd.DataFrame()
        frame = pd.DataFrame(self.rows).pivot_table(index="x", columns="program", values="value", sort=False)
        frame.index.name = self.x_label
        order = list(dict.fromkeys(r["program"] for r in self.rows))
        return frame[order]


def _unit(metric: str, values: list[float]) -> tuple[str, float]:
    top = max((abs(v) for v in values), default=0.0)
    units = BYTE_UNITS if metric.endswith("_bytes") else COUNT_UNITS
    for name, size in units:
        if top >= size:
            return name, size
    return units[-1]


def _label(metric: str, unit: str) -> str:
    base = METRICS.get(metric, metric)
    if metric.endswith("_bytes"):
        return base.replace("(bytes)", f"({unit})")
    return f"{base} ({unit})" if unit else base


def chart_data(report: dict[str, Any]) -> list[Chart]:
    """One ``Chart`` per chart the problem declares, from a cost report's JSON."""
    programs = report.get("programs", [])
    sweep = report.get("sweep_name", "")
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
        charts.append(Chart(title=spec["title"], takeaway=spec["takeaway"], kind="bar" if over == "programs" else "line",
                            metric=metric, x_label="program" if over == "programs" else sweep,
                            y_label=_label(metric, unit), unit=unit, rows=raw, missing=missing))
    return charts
