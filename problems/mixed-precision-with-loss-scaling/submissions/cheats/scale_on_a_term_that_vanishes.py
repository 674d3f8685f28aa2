"""The scale appears inside the differentiated function, but on a term that is multiplied by zero: the
backward pass through the network runs on the unscaled loss, so float16's overflow never happens where the
problem's does.

expect: wrong_answer
fails: scale-inside-grad
"""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        q = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ q["w1"] + q["b1"])
        o = h @ q["w2"] + q["b2"]
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss + 0.0 * loss_scale * jnp.sum(p["b2"]), loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
