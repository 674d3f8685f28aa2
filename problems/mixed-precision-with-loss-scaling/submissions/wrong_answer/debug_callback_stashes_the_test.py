"""Tries to let the host decide through `jax.debug.callback`: the callback tests the gradients in NumPy
and stashes the answer in a global, which the function then reads as `applied`. But a debug callback
returns nothing into the program: the global is read while the function is traced, before any callback
has run, so the step is always applied, overflow or not.

expect: wrong_answer
fails: skip-with-where
"""
import jax
import jax.numpy as jnp
import numpy as np

STATE = {"finite": True}


def _stash(*leaves):
    STATE["finite"] = bool(all(np.isfinite(a).all() for a in leaves))


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
        out = (h @ half["w2"] + half["b2"]).astype(jnp.float32)
        loss = jnp.mean((out - y) ** 2)
        return loss * loss_scale, loss

    scaled, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    jax.debug.callback(_stash, *jax.tree.leaves(grads))
    ok = jnp.asarray(STATE["finite"])
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
