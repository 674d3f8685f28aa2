"""Requirement checks for data-parallel-train-step, read off the program XLA partitioned.

The verifier rebuilds the traced program, compiles it for the grader's 8 CPU devices and records how XLA
partitioned it (``grader/verifier/partitioned.py``, read with ``grader/toolkit/sharding.py``): the shape
each device holds of every input and output, the collectives of the partitioned module with how often each
runs, and each device's operations. Nothing here reads a name, a scope or the source: a `P("data")` that XLA
did not keep, or an all-reduce that is named but not run, is not there.

- **batch-sharded**: every leaf of `x` and `y` arrives split by rows into 8 blocks, one per device.
- **params-replicated**: every leaf of `params` arrives, and every `params.*` output leaves, whole on each of
  the 8 devices.
- **gradients-all-reduced**: each device's matrix products and reductions (``products`` in the record: a
  product written as a broadcast multiply and a sum counts too) are at most half the full batch's matrix
  products (2B(2DH + 3HK): forward, and the backward's two weight gradients and one activation gradient); the only collectives are all-reduces; the numbers they
  move per step (each counted as often as it runs, loops by their trip counts) are between the parameters'
  count and that count plus 8. With the batch split and no other way between devices, only an all-reduce of
  the gradients (or of a step computed from them) leaves every device with the full batch's update.
"""
from __future__ import annotations

from math import prod

from grader.toolkit import (CheckResult, Trace, collectives, complete, iter_eqns, leaves_of, line_hint, moved,
                            on_devices, placements, shape_text, split_rows, whole)

DEVICES = 8
LOSS_NUMBERS = 8
"""Numbers beyond the parameters' count an all-reduce may move per step (the loss, a count of rows)."""
DECLARED = {"jit", "pjit", "shard_map", "sharding_constraint", "device_put", "reshard"}


def _declared(trace: Trace) -> list:
    """The equations that say how things are placed (jit shardings, constraints, shard_map): where the
    evidence points. What XLA made of them is what the rows read."""
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive in DECLARED][:3]


def _where(trace: Trace) -> str:
    found = _declared(trace)
    return line_hint(found[0]) if found else ""


def _shown(trace: Trace, result: CheckResult) -> CheckResult:
    """``result`` pointing at the equations that declare placements."""
    result.evidence = result.evidence or [r.evidence("placements XLA partitioned") for r in _declared(trace)]
    return result


def _record(trace: Trace) -> tuple[dict | None, CheckResult | None]:
    return on_devices(trace, DEVICES)


def batch_sharded(trace: Trace) -> CheckResult:
    return _shown(trace, _batch_sharded(trace))


def _batch_sharded(trace: Trace) -> CheckResult:
    record, problem = _record(trace)
    if problem:
        return problem
    places = placements(trace, record, "inputs")
    batch = {**leaves_of(places, "x"), **leaves_of(places, "y")}
    if not batch:
        return CheckResult(False, "The grader could not find `x` and `y` among the program's inputs.")
    for name, place in batch.items():
        if not split_rows(place, DEVICES):
            how = ("whole on every device (replicated)" if whole(place, DEVICES) else
                   f"as blocks of shape {shape_text(place.get('shard', []))}")
            return CheckResult(False, f"`{name}` (shape {shape_text(place.get('shape', []))}) arrives in the "
                               f"partitioned program {how}, not as 8 blocks of B/8 rows, one per device. Give it "
                               f"`NamedSharding(mesh, P(\"data\"))`{_where(trace)} (or `in_specs=P(\"data\")`), so "
                               "that each device is handed only its own examples.")
    b = batch.get("x", next(iter(batch.values())))["shape"][0]
    return CheckResult(True, f"`x` and `y` arrive split by rows over the 8 devices: each holds {b // DEVICES} of "
                       f"the {b} examples.")


def params_replicated(trace: Trace) -> CheckResult:
    return _shown(trace, _params_replicated(trace))


def _params_replicated(trace: Trace) -> CheckResult:
    record, problem = _record(trace)
    if problem:
        return problem
    ins = leaves_of(placements(trace, record, "inputs"), "params")
    outs = leaves_of(placements(trace, record, "outputs"), "params")
    if not ins or not outs:
        return CheckResult(False, "The grader could not find the parameters among the program's inputs and "
                           "outputs.")
    for side, places in (("arrives", ins), ("leaves", outs)):
        for name, place in places.items():
            if not whole(place, DEVICES):
                return CheckResult(False, f"`{name}` {side} the partitioned program split into blocks of shape "
                                   f"{shape_text(place.get('shard', []))}, not whole on every device: in data "
                                   "parallelism every device keeps all the parameters. Give the parameters "
                                   f"`NamedSharding(mesh, P())`{_where(trace)}, in and out.")
    return CheckResult(True, "Every parameter arrives, and every updated parameter leaves, whole on each of the 8 "
                       "devices.")


def _full_batch_work(trace: Trace) -> int:
    b, d = trace.args["x"]
    k = trace.args["y"][1]
    h = trace.args["params"]["b1"][0]
    return 2 * b * (2 * d * h + 3 * h * k)


def gradients_all_reduced(trace: Trace) -> CheckResult:
    return _shown(trace, _gradients_all_reduced(trace))


def _gradients_all_reduced(trace: Trace) -> CheckResult:
    record, problem = _record(trace)
    if problem:
        return problem
    if not complete(record):
        return CheckResult(False, f"The partitioned program runs {record.get('collectives_total')} collectives, "
                           "more than the grader counts: a data-parallel step needs one all-reduce of the "
                           "gradients.")
    full = _full_batch_work(trace)
    work = int(record.get("products") or 0)
    if record.get("unknown_loops") or 2 * work > full:
        why = (" (part of it in a loop whose trip count XLA could not tell)" if record.get("unknown_loops") else "")
        return CheckResult(False, f"Each device's matrix products and reductions come to about {work:,} "
                           f"operations{why}, more than half of the {full:,} the full batch's matrix products take: the devices are each doing the "
                           "whole batch's work rather than their share (a replicated batch, or the batch "
                           "gathered back onto every device). Split `x` and `y` over the devices and let each "
                           "compute the loss and gradient of its own rows.")
    others = collectives(record, tuple(k for k in ("all-gather", "reduce-scatter", "collective-permute",
                                                    "all-to-all", "ragged-all-to-all", "collective-broadcast")))
    if others:
        kinds = sorted({c["kind"] for c in others})
        return CheckResult(False, f"The partitioned program runs {', '.join(f'`{k}`' for k in kinds)}: data "
                           "parallelism combines the devices' gradients with one all-reduce (`psum`/`pmean`, or "
                           "what XLA inserts when the batch is split and the parameters are whole), and moves "
                           "nothing else between devices. An all-gather of the batch or of the gradients, or a "
                           "reduce-scatter with an all-gather after it, does more than that.")
    reduces = collectives(record, ("all-reduce",))
    count = sum(prod(s) for s in trace.args["params"].values() if isinstance(s, list))
    numbers = moved(reduces)
    if not reduces:
        return CheckResult(False, "The partitioned program runs no all-reduce: the devices never combine their "
                           "gradients, so no device can hold the full batch's update. Average them with "
                           "`jax.lax.pmean(grads, \"data\")` in a `shard_map`, or let XLA do it: keep the "
                           "parameters replicated and the batch split in a `jax.jit`.")
    if numbers is None:
        return CheckResult(False, "An all-reduce runs in a loop whose trip count XLA could not tell, so the grader "
                           "cannot count how often the gradients are combined. All-reduce them once, outside "
                           "any `while_loop`.")
    if numbers < count:
        return CheckResult(False, f"The all-reduces move {numbers} numbers per step, fewer than the {count} the "
                           "parameters hold: not every gradient is combined across devices (an all-reduce of "
                           "the loss alone combines no gradient).")
    if numbers > count + LOSS_NUMBERS:
        return CheckResult(False, f"The all-reduces move {numbers} numbers per step, more than the {count} the "
                           f"parameters hold plus {LOSS_NUMBERS}: gradients are combined more than once (a "
                           "`pmean` of gradients that autodiff has already summed across devices, an "
                           "all-reduce inside a loop), or more than the gradients is all-reduced (the "
                           "batch or the activations).")
    runs = sum(int(c["times"]) for c in reduces)
    return CheckResult(True, f"Each device's matrix products and reductions come to about {work:,} operations "
                       f"({work / full:.0%} of the full batch's), the only collectives are {runs} all-reduce{'s' if runs != 1 else ''}, "
                       f"and {'they move' if runs != 1 else 'it moves'} {numbers} numbers per step: the {count} "
                       "the parameters hold, each gradient once"
                       + (f", and {numbers - count} more (the loss)." if numbers > count else "."))


CHECKS = {
    "batch-sharded": batch_sharded,
    "params-replicated": params_replicated,
    "gradients-all-reduced": gradients_all_reduced,
}
