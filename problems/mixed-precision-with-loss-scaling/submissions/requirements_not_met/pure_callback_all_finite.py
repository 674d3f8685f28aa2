"""The all-finite test runs on the host: `jax.pure_callback` hands every gradient to NumPy, which says
whether they are all finite, and its answer decides the step and is returned as `applied`. Right numbers,
but the traced program does not decide the step: Python does, outside it.

scale-inside-grad fails too: the grader evaluates the program again with another `loss_scale` to see the
backward pass scale with it, and a host callback is the learner's Python, which it never runs.

expect: requirements_not_met
fails: scale-inside-grad,skip-with-where
"""
import jax
import jax.numpy as jnp
import numpy as np


def _all_finite_on_host(*leaves):
    return np.asarray(all(np.isfinite(a).all() for a in leaves))


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
        out = (h @ half["w2"] + half["b2"]).astype(jnp.float32)
        loss = jnp.mean((out - y) ** 2)
        return loss * loss_scale, loss

    scaled, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    finite = jax.pure_callback(_all_finite_on_host, jax.ShapeDtypeStruct((), jnp.bool_), *jax.tree.leaves(grads))
    new = jax.tree.map(lambda p, g: jnp.where(finite, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": finite}
