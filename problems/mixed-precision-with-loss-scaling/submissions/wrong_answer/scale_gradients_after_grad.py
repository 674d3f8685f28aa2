"""Scales too late: the float16 backward pass runs on the unscaled loss, and the gradients are multiplied
by the scale (and divided again) only after `jax.grad` returns them. The backward pass then never
overflows where the problem's does, and small gradients get no protection.

expect: wrong_answer
fails: scale-inside-grad
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        return jnp.mean((o.astype(jnp.float32) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    scaled = jax.tree.map(lambda g: g * loss_scale, grads)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
