"""What a Pallas kernel moves between HBM and VMEM and the work it does, counted from its grid and blocks.

XLA's cost analysis counts nothing inside a Mosaic kernel (0 FLOPs and 0 bytes for the custom call), so a
Pallas problem's Cost tab counts the kernel's figures from the ``pallas_call`` as data, a model:

- **HBM traffic**: the grid runs in order, its last axis fastest (Pallas TPU's pipeline). At every step each
  block's index map is evaluated; an input block is copied in from HBM, and an output block written back,
  only when its block index differs from the step before's (the pipeline skips the copy of an unchanged
  block). Bytes are the block's elements times its dtype's size. A block left in HBM (``memory_space=pl.ANY``:
  the kernel copies by hand) and scratch buffers (VMEM) are not counted; an index map that reads
  scalar-prefetch values cannot be evaluated ahead of time, and its block is counted at every step (an
  upper bound), which ``notes`` say.
- **FLOPs**: the kernel's equations at every step (a ``pl.when`` branch only where its condition, evaluated
  from ``program_id``, holds), in XLA's own convention so that they compare with its count of the ``jnp``
  version: a ``dot_general`` 2 x M x N x K, an elementwise operation one per element, a reduction one per
  input element; exponentials, logarithms, square roots and the like are counted apart, as transcendentals.

It runs on the trusted side, on the rebuilt program (``grader/verifier/tpu_compile.py``), or on a traced one.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

from grader.toolkit.pallas import INDEX_OPS

PEAK_FLOPS = 197e12
"""A TPU v5e chip's peak bfloat16 matrix throughput, FLOP/s."""
PEAK_BYTES = 819e9
"""Its HBM bandwidth, bytes/s."""
ROOFS = f"{PEAK_FLOPS / 1e12:.0f} TFLOP/s, bytes / {PEAK_BYTES / 1e9:.0f} GB/s"
"""The two roofs as the Cost tab writes them: ``max(FLOPs / ROOFS)``."""
MAX_STEPS = 1 << 16
"""Grids of more steps are not walked step by step (the figures would take seconds): none is counted."""

TRANSCENDENTAL = {"exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "rsqrt", "sqrt", "cbrt", "pow",
                  "erf", "erfc", "erf_inv", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
                  "cosh", "asinh", "acosh", "atanh", "lgamma", "digamma"}
"""Counted as transcendentals, as XLA counts them (not in its FLOPs)."""
REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
              "argmax", "argmin", "cumsum", "cummax", "cummin", "cumprod", "cumlogsumexp"}
FREE = {"get", "swap", "load", "store", "masked_load", "masked_swap", "broadcast_in_dim", "reshape", "squeeze",
        "expand_dims", "transpose", "iota", "copy", "copy_p", "slice", "dynamic_slice", "dynamic_update_slice",
        "concatenate", "pad", "program_id", "num_programs", "multiple_of", "bitcast_convert_type",
        "rev", "gather", "scatter", "dma_start", "dma_wait", "semaphore_signal", "semaphore_wait",
        "delay", "run_scoped"}
"""No arithmetic: data moved within VMEM or re-described (``run_scoped``'s body is counted on its own)."""
CALLS = {"pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "run_scoped"}


def roofline(flops: float, hbm_bytes: float) -> dict[str, Any]:
    """The v5e's roofline figure: FLOPs per byte, and the least time the chip could take, ``max(FLOPs / peak
    FLOP/s, bytes / HBM bandwidth)``, with the roof that binds (``compute`` or ``memory``)."""
    compute_s, memory_s = flops / PEAK_FLOPS, hbm_bytes / PEAK_BYTES
    return {"intensity": flops / hbm_bytes if hbm_bytes else None, "bound_s": max(compute_s, memory_s),
            "binds": "compute" if compute_s >= memory_s else "memory", "compute_s": compute_s, "memory_s": memory_s}


def kernel_figures(closed: Any) -> dict[str, Any] | None:
    """The model's figures for every ``pallas_call`` of ``closed`` (a ClosedJaxpr), summed: ``hbm_bytes``
    (``read_bytes`` + ``written_bytes``), ``flops``, ``transcendentals``, ``steps``, ``operands`` (per block:
    its origin, block shape, copies and bytes) and ``notes``; None when the program holds no ``pallas_call``."""
    calls = [e for e in _all_eqns(closed.jaxpr) if e.primitive.name == "pallas_call"]
    if not calls:
        return None
    out: dict[str, Any] = {"hbm_bytes": 0, "read_bytes": 0, "written_bytes": 0, "flops": 0.0,
                           "transcendentals": 0.0, "steps": 0, "operands": [], "notes": [], "calls": len(calls)}
    for eqn in calls:
        _one_call(eqn, out)
    out["hbm_bytes"] = out["read_bytes"] + out["written_bytes"]
    if len(calls) > 1:
        out["notes"].append(f"{len(calls)} `pallas_call`s, summed")
    return out


def _one_call(eqn: Any, out: dict[str, Any]) -> None:
    gm = eqn.params["grid_mapping"]
    grid = tuple(int(n) if isinstance(n, int) else 0 for n in gm.grid)
    steps = math.prod(grid) if grid else 1
    if steps > MAX_STEPS or 0 in grid:
        out["notes"].append(f"a grid of {steps:,} steps (or a dynamic one) was not walked: nothing counted for it")
        return
    points = list(_grid_points(grid))
    out["steps"] += steps
    prefetch = int(gm.num_index_operands)
    for b, bm in enumerate(gm.block_mappings):
        is_output = b >= gm.num_inputs
        aval = bm.block_aval
        space = str(getattr(getattr(aval, "memory_space", None), "value", getattr(aval, "memory_space", ""))).lower()
        size = math.prod(int(n) for n in aval.shape) * _itemsize(aval.dtype)
        row = {"origin": str(bm.origin)[:80], "block": [int(n) for n in aval.shape], "dtype": str(aval.dtype),
               "output": is_output, "copies": 0, "bytes": 0}
        if space in ("any", "hbm"):
            row["note"] = "left in HBM: the kernel's own copies are not counted"
            out["notes"].append(f"{row['origin']} is left in HBM (copied by hand): not counted")
        else:
            copies, exact = _copies(bm.index_map_jaxpr, tuple(gm.grid), points, prefetch)
            row["copies"], row["bytes"] = copies, copies * size
            if not exact:
                row["note"] = "index map not evaluated ahead of time: counted at every step"
                out["notes"].append(f"the index map of {row['origin']} reads scalar-prefetch values or other data: "
                                    "counted at every step, an upper bound")
        out["written_bytes" if is_output else "read_bytes"] += row["bytes"]
        out["operands"].append(row)
    for point in points:
        flops, trans = _work(eqn.params["jaxpr"], {}, point, grid)
        out["flops"] += flops
        out["transcendentals"] += trans


def _grid_points(grid: tuple[int, ...]):
    """Every grid step in the order Pallas TPU runs them: row-major, the last axis fastest."""
    return itertools.product(*(range(n) for n in grid))


def _copies(index_map: Any, grid: tuple, points: list[tuple[int, ...]], prefetch: int) -> tuple[int, bool]:
    """How many times a block is copied (its index changes between consecutive steps, the first step
    included), and whether every index could be evaluated (the map run at every grid point: the same runner
    as the verifier's view of a kernel, ``program.run_index_map``)."""
    from grader.boundary.program import run_index_map
    table = None if prefetch else run_index_map(index_map, grid)
    if table is None or len(table) != len(points):
        return len(points), False
    copies, last = 0, None
    for at in table:
        if at != last:
            copies += 1
        last = at
    return copies, True


def _read(env: dict[Any, Any], atom: Any) -> Any:
    from jax.extend.core import Literal
    if isinstance(atom, Literal):
        return atom.val
    return env.get(atom)


def _scalar(value: Any) -> int | None:
    try:
        if getattr(value, "shape", ()) not in ((), None):
            return None
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):  # -inf, the start of a running maximum: not an index
        return None
    return int(number) if number == int(number) else None


def _work(jaxpr: Any, env: dict[Any, Any], point: tuple[int, ...], grid: tuple[int, ...],
          depth: int = 0) -> tuple[float, float]:
    """(FLOPs, transcendentals) of one step of a kernel (sub-)program; ``env`` holds the scalar integers known
    so far (program ids and what is computed from them), so that a ``pl.when`` counts only where it runs."""
    flops = trans = 0.0
    if depth > 16:
        return flops, trans
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        outs = eqn.outvars
        if name == "program_id":
            env[outs[0]] = point[eqn.params["axis"]]
            continue
        if name == "num_programs":
            env[outs[0]] = grid[eqn.params["axis"]]
            continue
        values = [_scalar(_read(env, v)) for v in eqn.invars]
        if name in INDEX_OPS and all(getattr(v.aval, "shape", None) == () for v in outs) and None not in values:
            result = INDEX_OPS[name](*values)
            if result is not None:
                env[outs[0]] = int(result)
            continue  # index arithmetic, not the kernel's work
        if name == "cond":
            branches = eqn.params["branches"]
            index = values[0] if values else None
            chosen = [branches[min(max(index, 0), len(branches) - 1)]] if index is not None else list(branches)
            costs = [_work(b.jaxpr, dict(zip(b.jaxpr.invars, [_read(env, v) for v in eqn.invars[1:]])), point,
                           grid, depth + 1) for b in chosen]
            f, t = max(costs)
            flops, trans = flops + f, trans + t
            continue
        if name == "scan":
            body = eqn.params["jaxpr"]
            f, t = _work(body.jaxpr, {}, point, grid, depth + 1)
            flops, trans = flops + f * eqn.params["length"], trans + t * eqn.params["length"]
            continue
        if name == "while":
            body = eqn.params["body_jaxpr"]
            f, t = _work(body.jaxpr, {}, point, grid, depth + 1)
            trips = _while_trips(eqn, env)
            flops, trans = flops + f * trips, trans + t * trips
            continue
        inner = eqn.params.get("jaxpr")
        if name in CALLS and inner is not None:
            sub = getattr(inner, "jaxpr", inner)
            f, t = _work(sub, dict(zip(sub.invars, [_read(env, v) for v in eqn.invars])), point, grid, depth + 1)
            flops, trans = flops + f, trans + t
            continue
        f, t = _eqn_cost(eqn)
        flops, trans = flops + f, trans + t
    return flops, trans


def _while_trips(eqn: Any, env: dict[Any, Any]) -> int:
    """A ``fori_loop``'s trip count where its bounds are known (``lower``, ``upper`` as the loop's first two
    carried values with a ``lt`` condition), else 1."""
    values = [_scalar(_read(env, v)) for v in eqn.invars]
    cond_n = eqn.params.get("cond_nconsts", 0)
    body_n = eqn.params.get("body_nconsts", 0)
    carried = values[cond_n + body_n:]
    if len(carried) >= 2 and carried[0] is not None and carried[1] is not None:
        return max(0, carried[1] - carried[0])
    return 1


def _size(aval: Any) -> int:
    return math.prod(int(n) for n in getattr(aval, "shape", ()) or ())


def _eqn_cost(eqn: Any) -> tuple[float, float]:
    name = eqn.primitive.name
    if name in FREE or not eqn.outvars:
        return 0.0, 0.0
    if name == "dot_general":
        (lhs_contract, _), _ = eqn.params["dimension_numbers"]
        lhs = eqn.invars[0].aval.shape
        k = math.prod(int(lhs[d]) for d in lhs_contract)
        return 2.0 * _size(eqn.outvars[0].aval) * k, 0.0
    if name in REDUCTIONS:
        return float(_size(eqn.invars[0].aval)), 0.0
    elements = float(_size(eqn.outvars[0].aval))
    return (0.0, elements) if name in TRANSCENDENTAL else (elements, 0.0)


def _itemsize(dtype: Any) -> int:
    import numpy as np
    try:
        return int(np.dtype(dtype).itemsize)
    except TypeError:
        return int(getattr(dtype, "itemsize", 4))


def _all_eqns(jaxpr: Any, depth: int = 0):
    """Every equation of a program and its sub-programs (not inside a kernel)."""
    for eqn in jaxpr.eqns:
        yield eqn
        if eqn.primitive.name == "pallas_call" or depth > 16:
            continue
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    yield from _all_eqns(inner, depth + 1)
                elif hasattr(sub, "eqns"):
                    yield from _all_eqns(sub, depth + 1)
