"""Keeps the master weights in float16: the parameters are rounded to float16 and updated there, then
returned as float32. The rounding alone moves them by up to 5e-4, and an update smaller than float16's
spacing (9.8e-4 between 1 and 2) is lost.

expect: wrong_answer
fails: skip-with-where
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    half = jax.tree.map(lambda a: a.astype(jnp.float16), params)

    def loss_fn(p):
        h = jnp.tanh(x.astype(jnp.float16) @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(half)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - (lr * g).astype(jnp.float16), p), half, grads)
    return {"params": jax.tree.map(lambda a: a.astype(jnp.float32), new), "loss": loss, "applied": ok}
