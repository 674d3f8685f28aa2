"""vmap of grad discarded next to a Python loop.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# jax.vmap(jax.grad(...)) is computed and thrown away; the returned values come from a Python loop that
# calls jax.grad once per example (B separate backward passes).
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    batched = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)  # noqa: F841 - decorative
    clipped, norms = [], []
    for n in range(x.shape[0]):
        g = jax.grad(_loss)(params, x[n], y[n])
        norm = jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(g)))
        clipped.append(jax.tree.map(lambda leaf: leaf * max_norm / jnp.maximum(norm, max_norm), g))
        norms.append(norm)
    return {"grads": jax.tree.map(lambda *ls: sum(ls) / len(ls), *clipped), "norms": jnp.stack(norms)}
