"""How every number a learner reads is written: the verdict's message, the cases table, the worst entry, and
the Cost tab's figures (``figure``: its tables, its charts' labels and its messages alike).

One formatter, so a value reads the same everywhere (issue 32: the banner said ``1.060169``, the table
``1.06017`` for the same number). ``DIGITS`` significant digits; expected and got side by side keep the same
number of decimals (``0.0439080`` beside ``0.0439077``), and drop together the trailing zeros both can spare
(``0.25`` beside ``0.25``).
"""
from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

DIGITS = 6
"""Significant digits of expected and got alike (the stored expected values have six)."""


def number(v: float) -> str:
    """``DIGITS`` significant digits, trailing zeros kept; whole numbers as ``3.0``."""
    v = float(v)
    if np.isfinite(v) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v)}.0"
    text = f"{v:#.{DIGITS}g}"
    return text[:-1] if text.endswith(".") else text


def value(v: Any, limit: int = 120) -> str:
    """A compact rendering of a number or a nested list of numbers, each written by ``number``."""
    if v is None:
        return ""
    try:
        arr = np.asarray(v, dtype=np.float64)
        text = np.array2string(arr, separator=", ", max_line_width=10_000, threshold=40,
                               formatter={"float_kind": number}).replace("\n", "")
    except (ValueError, TypeError):
        text = json.dumps(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_DECIMALS = re.compile(r"(\d\.)(\d+)")


def pair(expected: Any, got: Any, limit: int = 120) -> tuple[str, str]:
    """Expected and got at the same precision: ``DIGITS`` significant digits each, then the trailing zeros every
    number of both can spare dropped from all alike."""
    texts = [value(expected, 10**9), value(got, 10**9)]
    spare = [len(m.group(2)) - max(1, len(m.group(2).rstrip("0"))) for t in texts for m in _DECIMALS.finditer(t)
             if m.group(2) != "0"]  # whole numbers ("2.0") are short already
    if spare and min(spare) > 0:
        cut = min(spare)
        texts = [_DECIMALS.sub(lambda m: m.group(1) + (m.group(2)[:-cut] if m.group(2) != "0" else "0"), t)
                 for t in texts]
    return tuple(t if len(t) <= limit else t[: limit - 1] + "…" for t in texts)  # type: ignore[return-value]


FIGURE_DIGITS = 3
"""Significant digits of a measured figure (a size, a count, a time) in the Cost tab."""


def figure(v: float | None, unit: str = "") -> str:
    """A measured figure as the Cost tab writes it everywhere (issue 46: the kernel table said 0.087 ms where
    its chart said 0.0872 ms): ``FIGURE_DIGITS`` significant digits below 1,000, whole with thousands
    separators from 1,000 on; the unit after a space. None and NaN are empty."""
    if v is None or v != v:
        return ""
    v = float(v)
    text = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.{FIGURE_DIGITS}g}"
    return f"{text} {unit}" if unit else text
