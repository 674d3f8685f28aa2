"""Scalar prefetch read as data (``grader/toolkit/pallas.py``, its last block): an index map and the kernel's
``pl.when`` conditions evaluated on prefetched values the checks choose, the kernel's uses of a Ref followed
into branches and loops, and the prefetched operand traced back to the argument it is.

Only traced (``jax.make_jaxpr``), never run: no interpret-mode compile.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402

from grader.learner import child  # noqa: E402
from grader.toolkit import (Trace, argument_itself, kernel_ref_uses, pallas_calls,  # noqa: E402
                            prefetched_block_indices, runs_at)

M, N, BM, BN = 4, 16, 2, 4


def ragged(x, lengths, *, x_map=None, when=None, vector_read=False, loop=False, prefetch=None):
    """A ragged row sum: ``lengths`` prefetched, one block of ``x`` per step, the add under ``when``."""
    x_map = x_map or (lambda i, j, lens: (i, jnp.minimum(j, jnp.maximum(lens[i] - 1, 0) // BN)))
    when = when or (lambda j, length: j * BN < length)

    def kernel(lens_ref, x_ref, o_ref):
        i, j = pl.program_id(0), pl.program_id(1)
        length = lens_ref[...][i] if vector_read else lens_ref[i]

        @pl.when(j == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)

        def add(c, carry):
            @pl.when(when(j, length) if not loop else c < length)
            def _():
                o_ref[...] += jnp.sum(x_ref[...], axis=1, keepdims=True)
            return carry

        if loop:
            jax.lax.fori_loop(0, 2, add, 0)
        else:
            add(0, 0)

    spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(M // BM, N // BN),
                                        in_specs=[pl.BlockSpec((BM, BN), x_map)],
                                        out_specs=pl.BlockSpec((BM, 1), lambda i, j, lens: (i, 0)))
    operand = lengths if prefetch is None else prefetch(lengths)
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((M, 1), jnp.float32))(operand, x)


def traced(**options) -> tuple[Trace, object]:
    x = np.zeros((M, N), np.float32)
    lengths = np.array([5, 12], np.int32)
    closed = jax.make_jaxpr(lambda x, lengths: ragged(x, lengths, **options))(x, lengths)
    view = child.JaxprSerializer(child.import_jax()).jaxpr(closed)
    trace = Trace(args={"x": [M, N], "lengths": [M // BM], "bm": BM, "bn": BN}, jaxpr=view,
                  input_names=["x", "lengths"])
    return trace, pallas_calls(trace)[0]


def test_the_index_map_is_evaluated_on_the_prefetched_lengths():
    _, call = traced()
    assert [prefetched_block_indices(call, 0, (1, j), [[0, 6]]) for j in range(4)] == [[1, 0], [1, 1], [1, 1], [1, 1]]
    assert [prefetched_block_indices(call, 0, (0, j), [[0, 6]]) for j in range(4)] == [[0, 0]] * 4  # length 0
    assert prefetched_block_indices(call, 1, (1, 3), [[0, 6]]) == [1, 0]
    assert prefetched_block_indices(call, 0, (1, 3), [[0]]) is None  # a read past the prefetched array


def test_a_negative_block_index_is_seen_not_clamped():
    _, call = traced(x_map=lambda i, j, lens: (i, jnp.minimum(j, (lens[i] - 1) // BN)))
    assert prefetched_block_indices(call, 0, (0, 2), [[0, 6]]) == [0, -1]


def test_the_kernels_condition_decides_where_the_block_is_read():
    _, call = traced()
    (read,) = kernel_ref_uses(call, 1)
    assert read.primitive == "get"
    assert [runs_at(call, read, (1, j), [[0, 9]]) for j in range(4)] == [True, True, True, False]
    assert [runs_at(call, read, (0, j), [[0, 9]]) for j in range(4)] == [False] * 4
    _, call = traced(when=lambda j, length: j * BN <= length)
    (read,) = kernel_ref_uses(call, 1)
    assert runs_at(call, read, (1, 2), [[0, 8]]) is True  # starts at the length, still read


def test_a_vector_read_of_the_lengths_is_evaluated_too():
    _, call = traced(vector_read=True)
    (read,) = kernel_ref_uses(call, 1)
    assert [runs_at(call, read, (1, j), [[0, 5]]) for j in range(4)] == [True, True, False, False]


def test_a_condition_on_a_loop_counter_cannot_be_evaluated():
    _, call = traced(loop=True)
    (read,) = kernel_ref_uses(call, 1)
    assert runs_at(call, read, (1, 0), [[0, 5]]) is None


@pytest.mark.parametrize("prefetch, itself", [(None, True), (lambda l: l.reshape(-1), True),
                                              (lambda l: l * 2, False), (lambda l: (l + BN - 1) // BN, False)])
def test_the_prefetched_operand_is_the_argument_itself_or_not(prefetch, itself):
    trace, call = traced(prefetch=prefetch)
    ok, computing = argument_itself(trace, call, 0, "lengths")
    assert ok is itself and bool(computing) is not itself
    assert argument_itself(trace, call, 1, "lengths")[0] is False  # x is not the lengths
