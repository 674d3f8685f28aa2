"""Decides the step on the scaled loss being finite instead of the gradients: the loss is finite in every
case here, while its float16 backward pass overflows in some, so the step writes `inf` and `NaN`.

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
    ok = jnp.isfinite(loss * loss_scale)
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
