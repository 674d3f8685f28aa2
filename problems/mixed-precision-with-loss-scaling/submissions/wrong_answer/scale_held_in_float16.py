"""Casts everything the loss touches to float16, the scale included: a scale above 65504 (2**17, say)
becomes `inf` in float16, the scaled loss is `inf`, and a step the problem takes is skipped.

On the hidden case whose scale is 2**16 the scale itself is inf in float16, so halving it changes no
product: scale-inside-grad fails there too.

expect: wrong_answer
fails: scale-inside-grad
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p, x16, scale = jax.tree.map(lambda a: jnp.asarray(a).astype(jnp.float16), (p, x, loss_scale))
        h = jnp.tanh(x16 @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss * scale.astype(jnp.float32), loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
