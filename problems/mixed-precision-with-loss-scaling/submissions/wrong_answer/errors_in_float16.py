"""The errors computed in float16: the targets are rounded to float16 and subtracted from the float16
outputs, and only their squares are averaged in float32. The statement computes the loss in float32 from the float16
output; the difference shows when the outputs are close to their targets.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
        out = h @ half["w2"] + half["b2"]
        loss = jnp.mean(((out - y.astype(jnp.float16)) ** 2).astype(jnp.float32))
        return loss * loss_scale, loss

    scaled, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    ok = jnp.all(jnp.stack([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
