# problem: hessian-vector-product
# expect: accepted
# what: a Hessian-vector product written out by hand (no `jax.jvp`, no `jax.grad`: the logistic loss's
# gradient and its derivative along `v` as matrix products), with the payload's program encoder patched so
# that every equation of the traced program carries the marks forward-over-reverse leaves,
# `jvp(transpose(jvp(...)))`. The numbers are right and no D-by-D array is formed, so it is accepted, as it
# is without the marks; forward-over-reverse is advice, and the marks do not change what it says.
import sys

import jax
import jax.numpy as jnp

_payload = sys.modules.get("jaxplay_payload")
if _payload is not None:
    _encoder = _payload._COMPANIONS["program"].ProgramEncoder
    _real = _encoder.name_stack

    def _marked(ns, _real=_real):
        return [["t", "jvp"], ["t", "transpose"], ["t", "jvp"]] + _real(ns)

    _encoder.name_stack = staticmethod(_marked)


def hvp(w, x, y, v):
    n = x.shape[0]
    s = jax.nn.sigmoid(x @ w)
    grad = x.T @ (s - y) / n
    product = x.T @ (s * (1.0 - s) * (x @ v)) / n
    return {"grad": grad, "hvp": product}
