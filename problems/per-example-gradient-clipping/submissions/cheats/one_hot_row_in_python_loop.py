"""One-hot row in a Python loop.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# A Python loop differentiates losses(p) @ one_hot(i): every backward pass runs over the whole batch (no
# example is sliced out of x), but there are B of them, one per example.
import jax
import jax.numpy as jnp


def clipped_mean_grad(params, x, y, max_norm):
    def losses(p):
        return (jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2

    n = x.shape[0]
    per_example = [jax.grad(lambda p: losses(p) @ jax.nn.one_hot(i, n))(params) for i in range(n)]
    grads = jax.tree.map(lambda *ls: jnp.stack(ls), *per_example)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
