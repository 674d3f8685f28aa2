"""The verifier compiles a program once per data and input types (``rebuild.compile_program``, issue 33).

The rebuild is a function of the program's data alone, so programs rebuilt from equal data share one compile;
any difference in the data (a constant's bytes, a primitive's parameter) or in the inputs' types is a compile
of its own: a cached compile must never stand in for another program."""
from __future__ import annotations

import json

import numpy as np
import pytest

from grader.boundary.program import ProgramEncoder
from grader.verifier import rebuild as rb

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _data(fn, *args):
    return json.loads(json.dumps(ProgramEncoder().program(jax.make_jaxpr(fn)(*args))))


def test_equal_data_shares_one_compile_and_computes_the_same():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    data = _data(lambda a: jnp.sin(a) @ a.T, x)
    first, second = rb.rebuild(data), rb.rebuild(json.loads(json.dumps(data)))
    assert first is not second
    c1, c2 = rb.compile_program(first, [x]), rb.compile_program(second, [x])
    assert c1 is c2
    np.testing.assert_allclose(rb.run_program(second, [x + 1], c2)[0], np.sin(x + 1) @ (x + 1).T, rtol=1e-6)


def test_other_constants_other_parameters_or_other_types_compile_anew():
    x = np.ones((4,), np.float32)
    base = rb.rebuild(_data(lambda a: a * np.float32(2.0) + np.arange(4, dtype=np.float32), x))
    other_const = rb.rebuild(_data(lambda a: a * np.float32(2.0) + np.arange(1, 5, dtype=np.float32), x))
    other_param = rb.rebuild(_data(lambda a: jax.lax.cumsum(a * np.float32(2.0), reverse=True), x))
    compiled = rb.compile_program(base, [x])
    assert rb.compile_program(other_const, [x]) is not compiled
    np.testing.assert_array_equal(rb.run_program(other_const, [x])[0], x * 2 + np.arange(1, 5))
    assert rb.compile_program(other_param, [x]) is not compiled
    assert rb.compile_program(other_param, [np.ones((5,), np.float32)]) is not rb.compile_program(other_param, [x])


def test_a_program_rebuilt_without_its_data_is_compiled_uncached():
    x = np.ones((3,), np.float32)
    closed = jax.make_jaxpr(lambda a: a + 1)(x)  # not from data: no digest, so never shared
    assert rb.compile_program(closed, [x]) is not rb.compile_program(closed, [x])
