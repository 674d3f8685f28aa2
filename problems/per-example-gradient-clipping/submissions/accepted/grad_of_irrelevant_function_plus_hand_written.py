"""grad of an irrelevant function plus hand-written gradients.

The per-example gradients are computed by hand, batched: one array of every example's gradient, computed at
once, is what `grads` and `norms` come from. How the gradients are computed is the learner's, so this passes.

expect: accepted
fails: none
"""
# jax.vmap(jax.grad(...)) is applied to a function that is not the loss (the squared norm of the params),
# added with weight 0; the per-example gradients are written out by hand, batched.
import jax
import jax.numpy as jnp


def clipped_mean_grad(params, x, y, max_norm):
    irrelevant = jax.vmap(jax.grad(lambda p, xn: sum(jnp.sum(v ** 2) for v in jax.tree.leaves(p))),
                          in_axes=(None, 0))(params, x)
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    r = 2.0 * (h @ params["w2"] + params["b2"] - y)
    dh = r[:, None] * params["w2"] * (1.0 - h ** 2)
    grads = {"w1": x[:, :, None] * dh[:, None, :], "b1": dh, "w2": r[:, None] * h, "b2": r}
    grads = jax.tree.map(lambda g, z: g + 0.0 * z, grads, irrelevant)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(x.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / x.shape[0], grads), "norms": norms}
