"""How XLA partitioned a rebuilt program over the grader's devices: the record ``Trace.partitioned`` holds.

Read in the verifier from the program it rebuilt and compiled (``rebuild.compile_program``), never from the
child: which devices the compiled program spans, the shape one device holds of every input and output (the
compiled program's own shardings, as XLA settled them after propagating the learner's ``in_shardings``,
``with_sharding_constraint`` and ``shard_map`` specs), and, for a program on more than one device, the
collectives and each device's work in the partitioned module (``grader/toolkit/sharding.py``).
"""
from __future__ import annotations

import weakref
from typing import Any

from grader.toolkit.sharding import partitioned_facts

_kept: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
"""The record of a compiled program (every case of a shape runs the same one; the compile cache shares it)."""


def _place(sharding: Any, shape: tuple[int, ...]) -> dict[str, Any]:
    try:
        shard = list(sharding.shard_shape(tuple(shape)))
    except Exception:  # noqa: BLE001 - a sharding that cannot say: the whole array, on its devices
        shard = list(shape)
    return {"shape": [int(d) for d in shape], "shard": [int(d) for d in shard],
            "devices": len(getattr(sharding, "device_set", ()) or ())}


def record(compiled: Any, flat_inputs: list, outs: list) -> dict[str, Any]:
    """The partition record of ``compiled`` (run on ``flat_inputs``, giving ``outs``)."""
    try:
        return _kept[compiled]
    except (KeyError, TypeError):
        pass
    ins = list(compiled.input_shardings[0])
    outs_s = list(compiled.output_shardings)
    devices = set()
    for s in ins + outs_s:
        devices |= set(getattr(s, "device_set", ()) or ())
    rec: dict[str, Any] = {
        "devices": len(devices),
        "inputs": [_place(s, tuple(getattr(a, "shape", ()))) for s, a in zip(ins, flat_inputs)],
        "outputs": [_place(s, tuple(getattr(o, "shape", ()))) for s, o in zip(outs_s, outs)],
    }
    if len(devices) > 1:
        rec.update(partitioned_facts(compiled.as_text()))
    try:
        _kept[compiled] = rec
    except TypeError:
        pass
    return rec
