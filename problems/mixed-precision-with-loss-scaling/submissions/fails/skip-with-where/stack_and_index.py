"""Chooses the parameters by indexing a stack of the old and the updated ones with the test turned into
an integer: right numbers, and no Python `if`, but the choice is a gather, not the `jnp.where` or
`lax.cond` the requirement asks for.

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
    new = jax.tree.map(lambda p, g: jnp.stack([p, p - lr * g])[ok.astype(jnp.int32)], params, grads)
    return {"params": new, "loss": loss, "applied": ok}
