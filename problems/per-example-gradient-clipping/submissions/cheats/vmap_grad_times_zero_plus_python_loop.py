"""vmap of grad times zero plus a Python loop.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# The vmapped per-example gradients are multiplied by zero and added to per-example gradients from a Python
# loop of jax.grad calls: the vmap is in the data flow, but the loop computes the answer.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    batched = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    looped = [jax.grad(_loss)(params, x[n], y[n]) for n in range(x.shape[0])]
    grads = jax.tree.map(lambda b, *ls: jnp.stack(ls) + 0.0 * b, batched, *looped)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(x.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / x.shape[0], grads), "norms": norms}
