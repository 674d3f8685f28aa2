"""The all-finite test written without `jnp.isfinite`: no gradient is NaN (`g != g`) and none is infinite
(`jnp.abs(g) == jnp.inf`), folded over the tree with `jax.tree_util.tree_reduce`. Any test that is true
exactly when every gradient is finite is fine; this one decides the step through `lax.cond` on the whole
tree, as haiku-style training loops do with `jax.lax.cond(ok, apply, skip, state)`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def forward(params, x):
    p = jax.tree_util.tree_map(lambda a: a.astype(jnp.float16), params)
    h = jnp.tanh(x.astype(jnp.float16) @ p["w1"] + p["b1"])
    return h @ p["w2"] + p["b2"]


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        loss = jnp.mean(jnp.square(forward(p, x).astype(jnp.float32) - y))
        return loss * loss_scale, loss

    grads, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree_util.tree_map(lambda g: g / loss_scale, grads)
    bad = jax.tree_util.tree_reduce(
        jnp.logical_or, jax.tree_util.tree_map(lambda g: jnp.any(g != g) | jnp.any(jnp.abs(g) == jnp.inf), grads))
    ok = jnp.logical_not(bad)
    new = jax.lax.cond(ok, lambda p: jax.tree_util.tree_map(lambda a, g: a - lr * g, p, grads), lambda p: p, params)
    return {"params": new, "loss": loss, "applied": ok}
