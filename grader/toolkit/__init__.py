"""The toolkit: what the problems' requirement checks may use, and all they import from the grader.

A problem's ``checks.py`` imports ``from grader.toolkit import ...`` only, and only the names in ``__all__``:
reading the traced program (``jaxpr_tools.py``), its exact data flow (``dataflow.py``), whether a structure
carries the answer (``carries.py``), batch axes (``axes.py``), pytree leaves (``leaves.py``), the program's
regions (``structure.py``), how XLA partitioned it over devices (``sharding.py``), what the submitted source
calls (``source.py``: parsed, never run) and the ``Evidence`` a result points at.
"""
from __future__ import annotations

from grader.toolkit.jaxpr_tools import (CALL, CHECKPOINT, HOST_CALLBACKS, JIT, LOOPS, MATMUL, SCAN, CheckResult, EqnRef,
                                        Trace, body_eqns, chain, find, from_inputs, is_backward_autodiff,
                                        is_differentiated, is_forward_autodiff, iter_eqns, line_hint, name_path,
                                        opaque_sources, relative_name_stack, size, var_id, growth)
from grader.toolkit.dataflow import MIXED, POSITIONAL, Node, node, scope_of
from grader.toolkit.carries import Carry, Group, carries, groups, own_scale, paths_around
from grader.toolkit.axes import Axes, axes_of, param
from grader.toolkit.source import AUTODIFF, REVERSE, SourceFacts
from grader.toolkit.leaves import dotted, host_callback, match_leaves, meeting_point, place_labels, shown
from grader.toolkit.pallas import (DATA_MOVES, KernelFlow, block_indices, computed_outside, definitions, fused_kernel,
                                   kernel_eqns, outside_kernels, pallas_calls, program_id_test, row_block_grid,
                                   tpu_compiles)
from grader.toolkit.pallas import (argument_itself, grid_points, kernel_ref_uses, prefetched_block_indices,
                                   revisited_output, runs_at, unevaluated)
from grader.toolkit.sharding import (NO_RECORD, collectives, complete, leaves_of, moved, on_devices, partitioned,
                                     placements, shape_text, split_along, split_rows, whole)
from grader.records import Evidence

__all__ = [
    "AUTODIFF", "REVERSE", "SourceFacts", "CALL", "CHECKPOINT", "HOST_CALLBACKS", "JIT", "LOOPS", "MATMUL", "MIXED", "POSITIONAL", "SCAN", "Axes",
    "Carry", "CheckResult", "EqnRef", "Evidence", "Group", "Node", "Trace", "axes_of", "body_eqns", "carries",
    "chain", "dotted", "find", "from_inputs", "groups", "host_callback", "is_backward_autodiff",
    "is_differentiated", "is_forward_autodiff", "iter_eqns", "line_hint", "match_leaves", "meeting_point",
    "name_path", "node", "opaque_sources", "own_scale", "param", "paths_around", "place_labels",
    "relative_name_stack", "scope_of", "shown", "size", "var_id", "growth",
    "DATA_MOVES", "block_indices", "computed_outside", "definitions", "fused_kernel", "kernel_eqns",
    "outside_kernels", "pallas_calls", "program_id_test", "row_block_grid", "tpu_compiles",
    "argument_itself", "kernel_ref_uses", "prefetched_block_indices", "runs_at", "grid_points", "revisited_output",
    "unevaluated",
    "KernelFlow",
    "NO_RECORD", "collectives", "complete", "leaves_of", "moved", "on_devices", "partitioned", "placements",
    "shape_text", "split_along", "split_rows", "whole",
]
