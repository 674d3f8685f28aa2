# problem: gradient-accumulation-with-scan
# expect: requirements_not_met
# what: scans over single examples (B steps, right numbers) and makes the payload's `arg_summary` report
# `num_microbatches` as B in the traced program's `args` (every second call: the first makes the key that
# matches cases to programs, left honest). The checks read the case's arguments; before issue 29 they read
# these, and "one scan of length num_microbatches" passed. Now they come from the case the grader holds.
import sys

import jax
import jax.numpy as jnp

payload = sys.modules.get("jaxplay_payload")
if payload is not None:
    _real = payload.arg_summary
    _calls = [0]

    def _forged(args, specs, _real=_real):
        out = _real(args, specs)
        _calls[0] += 1
        if _calls[0] % 2 == 0 and "num_microbatches" in out and isinstance(out.get("x"), list):
            out["num_microbatches"] = out["x"][0]
        return out

    payload.arg_summary = _forged


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    xs, ys = x[:, None, :], y[:, None, :]  # one example per step

    def step(carry, batch):
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (carry[0] + loss, jax.tree.map(jnp.add, carry[1], grads)), None

    (loss, grads), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    n = x.shape[0]
    return {"loss": loss / n, "grads": jax.tree.map(lambda g: g / n, grads)}
