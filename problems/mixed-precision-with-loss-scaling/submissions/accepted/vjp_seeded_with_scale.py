"""The gradient with respect to the float16 copy of the parameters, taken with `jax.vjp` and seeded with
the loss scale (the same as differentiating the loss times the scale), cast back to float32 and unscaled;
`lax.cond` keeps the old parameters.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    half = {k: v.astype(jnp.float16) for k, v in params.items()}
    x16 = x.astype(jnp.float16)

    def loss_fn(p):
        h = jnp.tanh(x16 @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        return jnp.mean((o.astype(jnp.float32) - y) ** 2)

    loss, pullback = jax.vjp(loss_fn, half)
    (scaled,) = pullback(jnp.float32(loss_scale))
    grads = {k: g.astype(jnp.float32) / loss_scale for k, g in scaled.items()}
    finite = jnp.array(True)
    for k in ("w1", "b1", "w2", "b2"):
        finite = jnp.logical_and(finite, jnp.isfinite(grads[k]).all())

    def step(p):
        return {k: p[k] - lr * grads[k] for k in p}

    new = jax.lax.cond(finite, step, lambda p: p, params)
    return {"params": new, "loss": loss, "applied": finite}
