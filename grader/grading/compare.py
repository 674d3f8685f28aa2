"""Compare a learner's output with the expected one in stages: keys, shape, dtype, then values.

Each stage fails with a sentence a learner can act on, e.g. ``grads.w1: shape (2, 3), expected (3, 2)``
or ``loss: got 1.0712, expected 1.060169 (abs err 1.1e-02 > tol 1.1e-04)``.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from grader.grading import numbers
from grader.records import LeafResult, learner


def decode(value: dict[str, Any]) -> Any:
    """The child's tagged encoding as plain Python data (dicts, lists, nested lists of numbers)."""
    t = value.get("t")
    if t == "dict":
        return {k: decode(v) for k, v in value["v"].items()}
    if t in ("list", "tuple"):
        return [decode(v) for v in value["v"]]
    if t == "array":
        return value.get("v")
    return None


TAGS = {"dict", "list", "tuple", "array"}


def is_tagged(value: Any) -> bool:
    """Whether an expected value is written in the child's tagged form (``{"t": "list", "v": [...]}``)."""
    return isinstance(value, dict) and value.get("t") in TAGS and "v" in value and set(value) <= {"t", "v", "dtype",
                                                                                                  "shape"}


def to_expected(encoded: dict[str, Any]) -> Any:
    """An output as ``examples.json``/``hidden_expected.json`` store it: plain where plain is unambiguous
    (dicts, float32 arrays as nested lists), tagged where it is not (a list or tuple of leaves, an array of
    another dtype: ``{"t": "array", "dtype": "int32", "v": [...]}``)."""
    t = encoded.get("t")
    if t == "dict":
        return {k: to_expected(v) for k, v in encoded["v"].items()}
    if t in ("list", "tuple"):
        return {"t": t, "v": [to_expected(v) for v in encoded["v"]]}
    if t == "array" and encoded.get("dtype", "float32") != "float32":
        return {"t": "array", "dtype": encoded["dtype"], "v": encoded.get("v")}
    if t == "array":
        return encoded.get("v")
    return None


def _describe(value: dict[str, Any]) -> str:
    t = value.get("t")
    if t == "dict":
        return f"a dict with keys {learner(sorted(value['v']))}"
    if t in ("list", "tuple"):
        return f"a {t} of {len(value['v'])}"
    if t == "array":
        return f"an array of shape {tuple(value['shape'])}"
    if t == "none":
        return "None"
    return learner(value["repr"]) if "repr" in value else "an unsupported value"


def _pair(expected: float, got: float) -> tuple[str, str]:
    """Expected and got as the cases table writes them (one formatter: ``grader.grading.numbers``)."""
    return numbers.pair(float(expected), float(got))


def compare(expected: Any, got: dict[str, Any], *, rtol: float, atol: float, path: str = "",
            per_output: Mapping[str, tuple[float, float]] | None = None) -> tuple[bool, str, list[LeafResult]]:
    """Return (passed, first problem or ``ok``, one LeafResult per expected leaf). ``per_output`` maps an
    output's path, or a prefix of paths (``params`` for ``params.w1``...), to its own ``(rtol, atol)``; the
    longest match wins (``Problem.tolerance`` gives all three)."""
    leaves: list[LeafResult] = []
    problems: list[str] = []
    _walk(expected, got, path, _Tolerance(rtol, atol, dict(per_output or {})), leaves, problems)
    return (not problems, problems[0] if problems else "ok", leaves)


class _Tolerance:
    """The (rtol, atol) of each output leaf, by its path."""

    def __init__(self, rtol: float, atol: float, per_output: dict[str, tuple[float, float]]) -> None:
        self.default, self.per_output = (rtol, atol), per_output

    def at(self, where: str) -> tuple[float, float]:
        matches = [p for p in self.per_output if where == p or where.startswith((p + ".", p + "["))]
        return self.per_output[max(matches, key=len)] if matches else self.default


def _walk(expected: Any, got: dict[str, Any], path: str, tolerance: _Tolerance,
          leaves: list[LeafResult], problems: list[str]) -> None:
    where = path or "output"
    if is_tagged(expected) and expected["t"] == "dict":
        expected = expected["v"]
    if is_tagged(expected) and expected["t"] in ("list", "tuple"):
        items = expected["v"]
        if got.get("t") != expected["t"] or len(got["v"]) != len(items):
            # node types exactly: a tuple is not the list the statement promises back ("lists stay lists")
            msg = f"{where}: expected a {expected['t']} of {len(items)}, got {_describe(got)}"
            problems.append(msg)
            leaves.append(LeafResult(path=where, passed=False, message=msg))
            return
        for i, (e, g) in enumerate(zip(items, got["v"])):
            _walk(e, g, f"{path}[{i}]" if path else f"[{i}]", tolerance, leaves, problems)
        return
    if isinstance(expected, dict) and not is_tagged(expected):
        if got.get("t") != "dict":
            msg = f"{where}: expected a dict with keys {sorted(expected)}, got {_describe(got)}"
            problems.append(msg)
            leaves.extend(LeafResult(path=_join(path, k), passed=False, message=msg) for k in expected)
            return
        missing = [k for k in expected if k not in got["v"]]
        extra = [k for k in got["v"] if k not in expected]
        if missing or extra:
            bits = ([f"missing key(s) {missing}"] if missing else []) + ([f"unexpected key(s) {learner(extra)}"] if extra else [])
            problems.append(f"{where}: {' and '.join(bits)}")
        for k, v in expected.items():
            if k in got["v"]:
                _walk(v, got["v"][k], _join(path, k), tolerance, leaves, problems)
            else:
                leaves.append(LeafResult(path=_join(path, k), passed=False, message="missing"))
        return
    leaves.append(_leaf(expected, got, where, *tolerance.at(where), problems))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _leaf(expected: Any, got: dict[str, Any], where: str, rtol: float, atol: float,
          problems: list[str]) -> LeafResult:
    dtype = "float32"
    if is_tagged(expected):
        dtype, expected = expected.get("dtype", "float32"), expected["v"]
    exact = dtype.startswith(("int", "uint", "bool"))
    exp = np.asarray(expected, dtype=np.float64)

    def fail(msg: str, got_value: Any = None, err: float | None = None) -> LeafResult:
        problems.append(msg)
        return LeafResult(path=where, passed=False, message=msg, expected=expected, got=got_value, max_abs_err=err)

    if got.get("t") != "array":
        return fail(f"{where}: expected an array of shape {exp.shape}, got {_describe(got)}")
    shape = tuple(got["shape"])
    if shape != exp.shape:
        return fail(f"{where}: shape {shape}, expected {exp.shape}")
    if got.get("dtype") != dtype:
        return fail(f"{where}: dtype {got.get('dtype')}, expected {dtype}")
    if got.get("v") is None:
        return fail(f"{where}: the value was too large to send back")
    value = np.asarray(got["v"], dtype=np.float64)
    special = ~np.isfinite(exp)  # an expected infinity (a masked score, say) must be met exactly
    unmatched = ~np.isfinite(value) & ~(special & ((value == exp) | (np.isnan(value) & np.isnan(exp))))
    if unmatched.any():
        bad = value[unmatched].ravel()[0]
        return fail(f"{where}: got {bad} (not a finite number)", got["v"])
    if (special & (value != exp) & ~(np.isnan(value) & np.isnan(exp))).any():
        idx = tuple(int(i) for i in np.argwhere(special & (value != exp))[0])
        e_text, g_text = _pair(exp[idx], value[idx])
        return fail(f"{where}{list(idx) if idx else ''}: got {g_text}, expected {e_text}", got["v"])
    value, exp = np.where(special, 0.0, value), np.where(special, 0.0, exp)
    err = np.abs(value - exp)
    tol = np.zeros_like(exp) if exact else atol + rtol * np.abs(exp)
    max_err = float(err.max()) if err.size else 0.0
    wrong = err > tol
    if wrong.any():
        idx = tuple(int(i) for i in np.argwhere(wrong)[0])
        at = f"{where}[{', '.join(map(str, idx))}]" if idx else where
        count = f"; {int(wrong.sum())} of {wrong.size} entries differ" if wrong.size > 1 else ""
        if dtype.startswith("bool"):  # a flag reads as one: "got False, expected True", not "got 0, expected 1"
            return fail(f"{at}: got {bool(value[idx])}, expected {bool(exp[idx])}{count}", got["v"], max_err)
        if exact:  # integers must match exactly: an error and a tolerance of zero say nothing more
            return fail(f"{at}: got {int(value[idx])}, expected {int(exp[idx])}{count}", got["v"], max_err)
        e_text, g_text = _pair(exp[idx], value[idx])
        return fail(f"{at}: got {g_text}, expected {e_text} "
                    f"(abs err {err[idx]:.1e} > tol {tol[idx]:.1e}){count}", got["v"], max_err)
    return LeafResult(path=where, passed=True, message="ok", expected=expected, got=got["v"],
                      max_abs_err=max_err if not math.isnan(max_err) else None)
