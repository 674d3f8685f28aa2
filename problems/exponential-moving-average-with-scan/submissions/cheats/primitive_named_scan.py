"""A primitive of its own registered under the name `scan`, whose implementation and lowering compute the
averages with a Python loop: only named like JAX's scan.

expect: requirements_not_met
fails: scan-over-time, average-in-carry
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

scan_p = Primitive("scan")
scan_p.multiple_results = True


def _impl(x, init, decay):
    m, rows = init, []
    for t in range(x.shape[0]):
        m = decay * m + (1.0 - decay) * x[t]
        rows.append(m)
    return [m, jnp.stack(rows)]


scan_p.def_impl(_impl)
scan_p.def_abstract_eval(lambda x, init, decay: [jax.core.ShapedArray(init.shape, init.dtype),
                                                 jax.core.ShapedArray(x.shape, x.dtype)])
mlir.register_lowering(scan_p, mlir.lower_fun(_impl, multiple_results=True))


def ema(x, init, decay):
    final, averages = scan_p.bind(x, init, decay)
    return {"averages": averages, "final": final}
