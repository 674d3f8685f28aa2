"""The backward pass by hand, under a `jax.named_scope` named like autodiff's `transpose(jvp(...))`: a
name the program chose itself is not autodiff's mark.

Whether autodiff was called is not what the row reads: the grader halves `loss_scale` and sees this
backward pass's products halve, and the update come from them alone, so it is the structure asked for.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp

f16, f32 = jnp.float16, jnp.float32


def _hand_step(params, x, y, loss_scale):
    """The scaled float16 backward pass written out by hand: the real gradients of these cheats."""
    w1, b1, w2, b2 = (params[k].astype(f16) for k in ("w1", "b1", "w2", "b2"))
    x16 = x.astype(f16)
    h = jnp.tanh(x16 @ w1 + b1)
    o = h @ w2 + b2
    err = o.astype(f32) - y
    d_o = (loss_scale * 2.0 * err / err.size).astype(f16)
    d_pre = (d_o @ w2.T) * (1 - h) * (1 + h)
    scaled = {"w1": x16.T @ d_pre, "b1": d_pre.sum(0), "w2": h.T @ d_o, "b2": d_o.sum(0)}
    return jnp.mean(err ** 2), {k: g.astype(f32) / loss_scale for k, g in scaled.items()}


def _finish(params, grads, loss, lr):
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in grads.values()]))
    new = {k: jnp.where(ok, params[k] - lr * grads[k], params[k]) for k in params}
    return {"params": new, "loss": loss, "applied": ok}


def _scaled_loss(p, x, y, loss_scale):
    p = jax.tree.map(lambda a: a.astype(f16), p)
    h = jnp.tanh(x.astype(f16) @ p["w1"] + p["b1"])
    o = h @ p["w2"] + p["b2"]
    return jnp.mean((o.astype(f32) - y) ** 2) * loss_scale


def mixed_precision_step(params, x, y, loss_scale, lr):
    with jax.named_scope("transpose(jvp(loss))"):
        loss, grads = _hand_step(params, x, y, loss_scale)
    return _finish(params, grads, loss, lr)
