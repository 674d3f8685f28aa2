"""bfloat16 instead of float16: bfloat16 has float32's range, so the scaled gradients never overflow
(and its 8-bit mantissa moves the loss by more than float16's rounding does).

expect: wrong_answer
fails: float16-matmuls
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(jnp.bfloat16), p)
        h = jnp.tanh(x.astype(jnp.bfloat16) @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
