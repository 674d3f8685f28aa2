"""A float32 forward pass beside the float16 one, its loss added to the returned loss times zero: the
numbers are the float16 ones, but a float32 matrix product flows into a returned value, which the
requirement rules out (only a float32 product whose result is never used, such as one printed with
`jax.debug.print`, computes nothing).

expect: requirements_not_met
fails: float16-matmuls
"""
import jax
import jax.numpy as jnp


def _forward(p, x):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return h @ p["w2"] + p["b2"]


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        out = _forward(half, x.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((out - y) ** 2)
        return loss * loss_scale, loss

    scaled, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    reference = jnp.mean((_forward(params, x) - y) ** 2)
    ok = jnp.all(jnp.stack([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss + 0.0 * reference, "applied": ok}
