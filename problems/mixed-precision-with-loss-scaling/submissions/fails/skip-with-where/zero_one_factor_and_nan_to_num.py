"""Skips the step by arithmetic instead of a choice: the update is multiplied by a 0/1 factor, after
`jnp.nan_to_num` has replaced `inf` and `NaN` by finite numbers (otherwise `0 * inf` would be NaN). The
numbers are right, but no `jnp.where` or `lax.cond` decides the step on one test: the only choices
(inside `nan_to_num`) are element by element.

expect: requirements_not_met
fails: skip-with-where
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    factor = ok.astype(jnp.float32)
    new = jax.tree.map(lambda p, g: p - lr * factor * jnp.nan_to_num(g), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
