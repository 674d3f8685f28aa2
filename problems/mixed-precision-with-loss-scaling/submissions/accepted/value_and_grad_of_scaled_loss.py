"""value_and_grad of the scaled loss; the loss is recovered by dividing the scaled value, the gradients are
unscaled with one tree_map, and one `jnp.where` per leaf keeps the old parameters on overflow.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        p16 = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(jnp.dot(x.astype(jnp.float16), p16["w1"]) + p16["b1"])
        out = jnp.dot(h, p16["w2"]) + p16["b2"]
        return jnp.mean(jnp.square(out.astype(jnp.float32) - y)) * loss_scale

    scaled, grads = jax.value_and_grad(scaled_loss)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.stack([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": scaled / loss_scale, "applied": ok}
