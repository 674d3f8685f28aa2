# problem: blocked-matmul-with-pallas
# expect: requirements_not_met
# what: a kernel whose grid walks output columns first (right numbers, the grid asked for is rows first), and
# a patched payload serializer that writes the grid asked for and, for every block, the table of where it
# would sit at every step of that grid (`block_table`, what the grid row reads where reading the index
# map's equations gives up): the program the checks read must be the verifier's, with its own table.
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

payload = sys.modules.get("jaxplay_payload")
if payload is not None:
    _real_jaxpr = payload.JaxprSerializer.jaxpr

    def _forge(node):
        if isinstance(node, dict):
            params = node.get("params")
            if isinstance(params, dict) and isinstance(params.get("grid"), list) and len(params["grid"]) == 3:
                n, m, k = params["grid"]
                params["grid"] = [m, n, k]
                points = [(i, j, kk) for i in range(m) for j in range(n) for kk in range(k)]
                params["block_table"] = [[[i, kk] for i, j, kk in points], [[kk, j] for i, j, kk in points],
                                         [[i, j] for i, j, kk in points]]
            for value in node.values():
                _forge(value)
        elif isinstance(node, list):
            for value in node:
                _forge(value)

    def _forged(self, j, _real_jaxpr=_real_jaxpr):
        out = _real_jaxpr(self, j)
        _forge(out)
        return out

    payload.JaxprSerializer.jaxpr = _forged


def kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...]


def blocked_matmul(a, b, bm, bn, bk):
    (m, k), n = a.shape, b.shape[1]
    return pl.pallas_call(
        kernel, grid=(n // bn, m // bm, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda j, i, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda j, i, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda j, i, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
    )(a, b)
