"""scan over chunks.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# Right numbers, but lax.scan walks the batch one example per step (chunks of size 1), running vmap(grad)
# on each chunk: the backward pass runs inside a loop over the examples.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]
    per_chunk = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))
    _, grads = jax.lax.scan(lambda c, xy: (c, per_chunk(params, *xy)), None,
                            (x.reshape(n, 1, -1), y.reshape(n, 1)))
    grads = jax.tree.map(lambda g: g.reshape((n,) + g.shape[2:]), grads)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
