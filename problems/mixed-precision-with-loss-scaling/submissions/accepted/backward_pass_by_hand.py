"""The whole step in float16, with the scale, but the backward pass written out by hand instead of taken
with `jax.grad`: the scaled loss's cotangent enters the first backward product, exactly as autodiff's would.

Whether autodiff was called is not what the row reads: the grader halves `loss_scale` and sees this
backward pass's products halve, and the update come from them alone, so it is the structure asked for.

expect: accepted
fails: none
"""
import jax.numpy as jnp

f16, f32 = jnp.float16, jnp.float32


def mixed_precision_step(params, x, y, loss_scale, lr):
    w1, b1, w2, b2 = (params[k].astype(f16) for k in ("w1", "b1", "w2", "b2"))
    x16 = x.astype(f16)
    h = jnp.tanh(x16 @ w1 + b1)
    o = h @ w2 + b2
    err = o.astype(f32) - y
    loss = jnp.mean(err ** 2)
    d_o = (loss_scale * 2.0 * err / err.size).astype(f16)          # the scaled loss's gradient
    d_pre = (d_o @ w2.T) * (1 - h) * (1 + h)
    scaled = {"w1": x16.T @ d_pre, "b1": d_pre.sum(0), "w2": h.T @ d_o, "b2": d_o.sum(0)}
    grads = {k: g.astype(f32) / loss_scale for k, g in scaled.items()}
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in grads.values()]))
    new = {k: jnp.where(ok, params[k] - lr * grads[k], params[k]) for k in params}
    return {"params": new, "loss": loss, "applied": ok}
