# problem: hessian-vector-product
# expect: accepted
# what: `jax.jvp` of the gradient of `0.5 * sum(w**2)` returns v itself, and the Hessian is applied to it by
# hand; the payload's `input_names` is made to call every program input `_`. The check that looks for a path
# from `w`, `x`, `v` around the forward-over-reverse pass then had nothing to start from (before issue 29);
# now which input is `w`, `x` or `v` comes from the problem's signature and the case the grader holds. No
# D-by-D array is formed and the numbers are right, so it is accepted (the way the product is taken is advice).
import sys

import jax
import jax.numpy as jnp

payload = sys.modules.get("jaxplay_payload")
if payload is not None:
    _real = payload.input_names
    payload.input_names = lambda args, specs, t=None, _real=_real: ["_" for _ in _real(args, specs, t)]


def hvp(w, x, y, v):
    _, same_v = jax.jvp(jax.grad(lambda w: 0.5 * jnp.sum(w ** 2)), (w,), (v,))
    n = x.shape[0]
    p = jax.nn.sigmoid(x @ w)
    return {"grad": x.T @ (p - y) / n, "hvp": x.T @ (p * (1 - p) * (x @ same_v)) / n}
