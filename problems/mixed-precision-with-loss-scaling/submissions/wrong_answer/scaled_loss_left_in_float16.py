"""The loss cast to float16 before it is scaled: `loss_scale` is a weakly typed float32 scalar, so
`loss16 * loss_scale` stays float16, and with a large scale the product overflows to `inf` before any
gradient is taken: every gradient is then `inf` or `NaN`, and steps the statement applies are skipped.

On those cases the scale overflows to inf, so halving it changes no product: scale-inside-grad fails there too.

expect: wrong_answer
fails: scale-inside-grad
"""
import jax
import jax.numpy as jnp


def _loss16(params, x, y):
    half = jax.tree.map(lambda a: a.astype(jnp.float16), params)
    h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
    o = h @ half["w2"] + half["b2"]
    return jnp.mean((o.astype(jnp.float32) - y) ** 2).astype(jnp.float16)


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        loss16 = _loss16(p, x, y)
        return loss16 * loss_scale, loss16  # float16 times a weak float32: float16

    scaled_grads, loss16 = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled_grads)
    finite = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new_params = jax.tree.map(lambda p, g: jnp.where(finite, p - lr * g, p), params, grads)
    return {"params": new_params, "loss": loss16.astype(jnp.float32), "applied": finite}
