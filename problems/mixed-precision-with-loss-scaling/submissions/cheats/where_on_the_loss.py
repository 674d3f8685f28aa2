"""A `jnp.where` that chooses the parameters, but on a test of the loss (always finite here); the real
skip is done by arithmetic inside the chosen branch.

expect: requirements_not_met
fails: skip-with-where
"""
import jax
import jax.numpy as jnp


def _grads(params, x, y, loss_scale):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    return loss, grads, ok


def _by_arithmetic(params, grads, ok, lr):
    """The step skipped with a 0/1 factor (after nan_to_num): the real answer of these cheats."""
    factor = ok.astype(jnp.float32)
    return jax.tree.map(lambda p, g: p - lr * factor * jnp.nan_to_num(g), params, grads)


def mixed_precision_step(params, x, y, loss_scale, lr):
    loss, grads, ok = _grads(params, x, y, loss_scale)
    keep = jnp.isfinite(loss)
    mixed = _by_arithmetic(params, grads, ok, lr)
    new = jax.tree.map(lambda m, p: jnp.where(keep, m, p), mixed, params)
    return {"params": new, "loss": loss, "applied": ok}
