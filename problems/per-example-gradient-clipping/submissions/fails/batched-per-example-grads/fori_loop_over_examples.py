"""fori_loop over examples.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# Right numbers, but lax.fori_loop walks the examples, differentiating x[i] one at a time and writing each
# gradient into a stacked carry.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]
    zeros = jax.tree.map(lambda p: jnp.zeros((n,) + p.shape, p.dtype), params)

    def body(i, acc):
        g = jax.grad(_loss)(params, x[i], y[i])
        return jax.tree.map(lambda a, gi: a.at[i].set(gi), acc, g)

    grads = jax.lax.fori_loop(0, n, body, zeros)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
