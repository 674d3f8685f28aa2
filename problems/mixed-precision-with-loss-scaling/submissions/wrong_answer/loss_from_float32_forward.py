"""The gradients come from the float16 network, but the loss is reported from a second forward pass in
float32: every output sits slightly off the float16 one, which shows when an output is close to its target.

expect: wrong_answer
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
        return jnp.mean((out - y) ** 2) * loss_scale

    grads = jax.tree.map(lambda g: g / loss_scale, jax.grad(scaled_loss)(params))
    loss = jnp.mean((_forward(params, x) - y) ** 2)
    finite = jnp.all(jnp.stack([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(finite, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": finite}
