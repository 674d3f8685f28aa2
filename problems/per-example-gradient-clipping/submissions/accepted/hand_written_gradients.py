"""Hand-written gradients.

The per-example gradients are computed by hand, batched: one array of every example's gradient, computed at
once, is what `grads` and `norms` come from. How the gradients are computed is the learner's, so this passes.

expect: accepted
fails: none
"""
# Right numbers and batched, but the per-example gradients are written out by hand: no backward pass made
# by autodiff.
import jax
import jax.numpy as jnp


def clipped_mean_grad(params, x, y, max_norm):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    r = 2.0 * (h @ params["w2"] + params["b2"] - y)
    dh = r[:, None] * params["w2"] * (1.0 - h ** 2)
    grads = {"w1": x[:, :, None] * dh[:, None, :], "b1": dh, "w2": r[:, None] * h, "b2": r}
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(x.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / x.shape[0], grads), "norms": norms}
