"""Decides leaf by leaf: each parameter is updated when its own gradient is finite. When only some
gradients overflow, the others are still updated, and the step is half taken.

expect: wrong_answer
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
    new = jax.tree.map(lambda p, g: jnp.where(jnp.isfinite(g).all(), p - lr * g, p), params, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    return {"params": new, "loss": loss, "applied": ok}
