"""The all-finite test on one number, as some training loops check a whole gradient tree cheaply: the sum of
every gradient entry is finite exactly when every entry is (a NaN or an infinity anywhere makes the sum NaN or
infinite, and float32 sums of these gradients do not overflow). The statement allows a test on an aggregate
like this one (or the global norm) that agrees with `jnp.isfinite` of every gradient; `lax.cond` then runs
the update or keeps the old parameters.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        w1, b1, w2, b2 = (p[k].astype(jnp.float16) for k in ("w1", "b1", "w2", "b2"))
        o = jnp.tanh(x.astype(jnp.float16) @ w1 + b1) @ w2 + b2
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    total = sum(jnp.sum(g) for g in jax.tree.leaves(grads))
    ok = jnp.isfinite(total)
    new = jax.lax.cond(ok, lambda: jax.tree.map(lambda p, g: p - lr * g, params, grads), lambda: params)
    return {"params": new, "loss": loss, "applied": ok}
