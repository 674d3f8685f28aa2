"""The all-finite test runs on the host through `jax.experimental.io_callback` (ordered, as a logging
loss scaler might write it) and its answer decides the step: Python decides, not the traced program.

scale-inside-grad fails too: the grader evaluates the program again with another `loss_scale` to see the
backward pass scale with it, and a host callback is the learner's Python, which it never runs.

expect: requirements_not_met
fails: scale-inside-grad,skip-with-where
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

SEEN = []


def _check_and_log(tree):
    ok = all(np.isfinite(np.asarray(a)).all() for a in jax.tree.leaves(tree))
    SEEN.append(bool(ok))
    return np.bool_(ok)


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
        out = (h @ half["w2"] + half["b2"]).astype(jnp.float32)
        loss = jnp.mean((out - y) ** 2)
        return loss * loss_scale, loss

    scaled, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    ok = io_callback(_check_and_log, jax.ShapeDtypeStruct((), jnp.bool_), grads, ordered=True)
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
