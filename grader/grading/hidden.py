"""What the learner's process is told about a hidden case: only what tracing needs.

A hidden case's values never enter the child (issue 29): the child traces on each array's shape and dtype
(``{"t": "abstract", "shape": [...], "dtype": "..."}``, which it turns into ``jax.ShapeDtypeStruct``), the
tree structure around them, and the values of static arguments (part of the traced program). A traced
number (``int``/``float`` not static), the entries of a traced ``ints`` tuple and a PRNG key's seed are sent
as zeros: ``jax.make_jaxpr`` sees only their types. The real values go to the verifier, from the parent.
"""
from __future__ import annotations

from typing import Any

import numpy as np

ABSTRACT = "abstract"
"""The tag of an array the child sees only as a shape and a dtype."""


def abstract_inputs(specs: list[Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """``inputs`` (a case's JSON arguments) with every value the program computes on replaced by its type."""
    out = {}
    for spec in specs:
        value = inputs[spec.name]
        if spec.static:
            out[spec.name] = value
        elif spec.kind == "int" or spec.kind == "key":
            out[spec.name] = 0
        elif spec.kind == "float":
            out[spec.name] = 0.0
        elif spec.kind == "ints":
            out[spec.name] = [0 for _ in value]
        elif spec.kind in ("tree", "float32_tree"):
            out[spec.name] = _tree(value, spec.dtype or "float32")
        else:
            out[spec.name] = _array(value, spec.dtype or "float32")
    return out


def _array(value: Any, dtype: str) -> dict[str, Any]:
    return {"t": ABSTRACT, "shape": [int(n) for n in np.shape(value)], "dtype": str(dtype)}


def _ragged(value: Any) -> bool:
    try:
        np.asarray(value)
    except ValueError:
        return True
    return False


def _tree(value: Any, dtype: str) -> Any:
    """The same decisions as the child's ``tree_arg``, made on the structure only."""
    if isinstance(value, dict) and value.get("t") in ("list", "tuple") and "v" in value:
        return {"t": value["t"], "v": [_tree(v, dtype) for v in value["v"]]}
    if isinstance(value, dict) and value.get("t") == "array" and "v" in value:
        return _array(value["v"], value.get("dtype") or dtype)
    if isinstance(value, dict):
        return {k: _tree(v, dtype) for k, v in value.items()}
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return {"t": "list", "v": [_tree(v, dtype) for v in value]}
    if isinstance(value, list) and _ragged(value):
        return {"t": "list", "v": [_tree(v, dtype) for v in value]}
    return _array(value, dtype)
