"""The probes' NumPy evaluator (``grader/learner/jaxpr_numpy.py``) computes what JAX computes, primitive by
primitive, so that probing a program needs no XLA compile (a primitive it cannot take falls back to JAX,
which compiles it: a scan's gradient pads with negative and interior padding in every backward step)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from grader.learner import jaxpr_numpy

OPS = jaxpr_numpy._np_ops(np)


def _configs(ndim: int):
    for axis, (lo, hi, interior) in itertools.product(range(ndim), itertools.product((-3, -1, 0, 2), (-2, 0, 3),
                                                                                    (0, 1, 2))):
        config = [(0, 0, 0)] * ndim
        config[axis] = (lo, hi, interior)
        if ndim == 3:
            config[(axis + 1) % 3] = (1, -1, 1)
        yield config


@pytest.mark.parametrize("shape", [(5,), (3, 4), (0, 3), (1, 2), (2, 3, 4)])
def test_pad_matches_lax_pad_with_negative_and_interior_padding(shape):
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    checked = 0
    for config in _configs(len(shape)):
        try:
            want = np.asarray(jax.lax.pad(jnp.asarray(x), np.float32(7), config))
        except (TypeError, ValueError):  # a result of negative size: JAX refuses it, and so must the evaluator
            with pytest.raises(Exception):
                OPS["pad"]({"padding_config": config}, x, np.float32(7))
            continue
        got = OPS["pad"]({"padding_config": config}, x, np.float32(7))
        assert got.shape == want.shape and got.dtype == want.dtype, config
        np.testing.assert_array_equal(got, want, err_msg=str(config))
        checked += 1
    assert checked > 20
