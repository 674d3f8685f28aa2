"""Requirement checks for tensor-parallel-mlp, read off the program XLA partitioned.

The verifier rebuilds the traced program, compiles it for the grader's 8 CPU devices and records how XLA
partitioned it (``grader/verifier/partitioned.py``, read with ``grader/toolkit/sharding.py``): the shape each
device holds of every input and output, the collectives of the partitioned module with how often each runs,
and each device's products. No name, scope or source line is read.

- **column-parallel**: `w1` arrives split along its columns (axis 1) into 8 blocks, `b1` along its only axis.
- **row-parallel**: `w2` arrives split along its rows (axis 0) into 8 blocks; `x`, `b2` and the output are whole
  on each of the 8 devices.
- **one-all-reduce**: each device's matrix products and reductions are at most half the block's (4BDH:
  two products of 2BDH), so no device computes every hidden unit; the only collectives are all-reduces; and
  they move exactly B x D numbers per call. A gather of the hidden activations, of a weight, or a second
  all-reduce all fail it.
"""
from __future__ import annotations

from grader.toolkit import (CheckResult, Trace, collectives, complete, iter_eqns, line_hint, moved, on_devices,
                            placements, shape_text, split_along, whole)

DEVICES = 8
DECLARED = {"jit", "pjit", "shard_map", "sharding_constraint", "device_put", "reshard"}
OTHERS = ("all-gather", "reduce-scatter", "collective-permute", "all-to-all", "ragged-all-to-all",
          "collective-broadcast")


def _declared(trace: Trace) -> list:
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive in DECLARED][:3]


def _where(trace: Trace) -> str:
    found = _declared(trace)
    return line_hint(found[0]) if found else ""


def _shown(trace: Trace, result: CheckResult) -> CheckResult:
    """``result`` pointing at the equations that declare placements (what XLA made of them is what is read)."""
    result.evidence = result.evidence or [r.evidence("placements XLA partitioned") for r in _declared(trace)]
    return result


def _split(trace: Trace, name: str, place: dict, axis: int, what: str) -> CheckResult | None:
    if split_along(place, DEVICES, axis):
        return None
    how = ("whole on every device (replicated)" if whole(place, DEVICES) else
           f"as blocks of shape {shape_text(place.get('shard', []))}")
    return CheckResult(False, f"`{name}` (shape {shape_text(place.get('shape', []))}) arrives in the partitioned "
                       f"program {how}, not as 8 blocks of H/8 {what}, one per device{_where(trace)}.")


def column_parallel(trace: Trace) -> CheckResult:
    return _shown(trace, _column_parallel(trace))


def _column_parallel(trace: Trace) -> CheckResult:
    record, problem = on_devices(trace, DEVICES)
    if problem:
        return problem
    places = placements(trace, record, "inputs")
    if "w1" not in places or "b1" not in places:
        return CheckResult(False, "The grader could not find `w1` and `b1` among the program's inputs.")
    for name, axis in (("w1", 1), ("b1", 0)):
        bad = _split(trace, name, places[name], axis, "columns" if name == "w1" else "entries")
        if bad:
            bad.message += (" Give it `P(None, \"model\")`" if name == "w1" else " Give it `P(\"model\")`") + \
                " in `in_specs`, so that each device holds only its own hidden units' weights."
            return bad
    h = places["w1"]["shape"][1]
    return CheckResult(True, f"`w1` and `b1` arrive split by columns over the 8 devices: each holds {h // DEVICES} "
                       f"of the {h} hidden units.")


def row_parallel(trace: Trace) -> CheckResult:
    return _shown(trace, _row_parallel(trace))


def _row_parallel(trace: Trace) -> CheckResult:
    record, problem = on_devices(trace, DEVICES)
    if problem:
        return problem
    places = placements(trace, record, "inputs")
    outs = list(placements(trace, record, "outputs").values()) or list(record.get("outputs") or [])
    if "w2" not in places or not outs:
        return CheckResult(False, "The grader could not find `w2` and the result in the program.")
    bad = _split(trace, "w2", places["w2"], 0, "rows")
    if bad:
        bad.message += " Give it `P(\"model\", None)` in `in_specs`, the rows matching each device's columns of `w1`."
        return bad
    for name in ("x", "b2"):
        if name in places and not whole(places[name], DEVICES):
            return CheckResult(False, f"`{name}` arrives split into blocks of shape "
                               f"{shape_text(places[name].get('shard', []))}: in this block every device needs all "
                               f"of it. Give it `P()`{_where(trace)}.")
    if not all(whole(o, DEVICES) for o in outs):
        return CheckResult(False, "The result leaves the partitioned program split over the devices, not whole on "
                           "each: sum the devices' shares with `jax.lax.psum` and return it with `out_specs=P()`.")
    h = places["w2"]["shape"][0]
    return CheckResult(True, f"`w2` arrives split by rows over the 8 devices ({h // DEVICES} of {h} each), and `x`, "
                       "`b2` and the result are whole on each device.")


def one_all_reduce(trace: Trace) -> CheckResult:
    return _shown(trace, _one_all_reduce(trace))


def _one_all_reduce(trace: Trace) -> CheckResult:
    record, problem = on_devices(trace, DEVICES)
    if problem:
        return problem
    if not complete(record):
        return CheckResult(False, f"The partitioned program runs {record.get('collectives_total')} collectives, "
                           "more than the grader counts: the block needs one all-reduce.")
    b, d = trace.args["x"]
    h = trace.args["w1"][1]
    block = 4 * b * d * h
    work = int(record.get("products") or 0)
    if record.get("unknown_loops") or 2 * work > block:
        return CheckResult(False, f"Each device's matrix products and reductions come to about {work:,} operations, "
                           f"more than half of the block's {block:,}: the devices each compute (nearly) every "
                           "hidden unit instead of their own H/8. Let each device multiply by its own columns "
                           "of `w1` and rows of `w2` only.")
    others = collectives(record, OTHERS)
    if others:
        kinds = sorted({c["kind"] for c in others})
        return CheckResult(False, f"The partitioned program runs {', '.join(f'`{k}`' for k in kinds)}: the block "
                           "needs one all-reduce of the output's shares and nothing else. Gathering the hidden "
                           "activations (B x H) or a weight moves more than the (B x D) output and is not needed: "
                           "each device can finish its share with its own rows of `w2`.")
    reduces = collectives(record, ("all-reduce",))
    numbers = moved(reduces)
    if not reduces:
        return CheckResult(False, "The partitioned program runs no all-reduce: the devices' shares of the output "
                           "are never added. Sum them with `jax.lax.psum(partial, \"model\")`.")
    runs = sum(int(c["times"]) for c in reduces if c.get("times") is not None)
    if numbers is None or runs != 1 or numbers != b * d:
        return CheckResult(False, f"The partitioned program runs {runs} all-reduce{'s' if runs != 1 else ''} moving "
                           f"{numbers} numbers per call; the block needs exactly one, of its B x D = {b * d} output "
                           "numbers (all-reducing the hidden activations, or the output twice, moves more).")
    return CheckResult(True, f"Each device's matrix products and reductions come to about {work:,} operations "
                       f"({work / block:.0%} of the block's), and its only collective is one all-reduce of the "
                       f"{b * d} output numbers.")


CHECKS = {
    "column-parallel": column_parallel,
    "row-parallel": row_parallel,
    "one-all-reduce": one_all_reduce,
}
