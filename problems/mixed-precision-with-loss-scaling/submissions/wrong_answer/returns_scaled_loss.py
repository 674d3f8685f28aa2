"""Returns the scaled loss `S * L` instead of `L` (what `jax.value_and_grad` of the scaled function
gives back, not divided).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        return jnp.mean((o.astype(jnp.float32) - y) ** 2) * loss_scale

    scaled_loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": scaled_loss, "applied": ok}
