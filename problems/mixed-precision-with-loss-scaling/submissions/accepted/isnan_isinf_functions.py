"""The all-finite test spelled with `jnp.isnan` and `jnp.isinf`: a gradient leaf is fine when it has no NaN
and no infinity, and the step is taken when every leaf is fine. The statement allows any test that agrees
with `jnp.isfinite` of every gradient; each leaf's new value is chosen with `jnp.where` on the one boolean.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
        out = h @ half["w2"] + half["b2"]
        loss = jnp.mean((out.astype(jnp.float32) - y) ** 2)
        return loss_scale * loss, loss

    scaled_grads, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled_grads)
    fine = [~(jnp.isnan(g).any() | jnp.isinf(g).any()) for g in jax.tree.leaves(grads)]
    ok = fine[0]
    for f in fine[1:]:
        ok = ok & f
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
