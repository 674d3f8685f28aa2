"""stop_gradient swap.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# The vmapped gradients enter only as g - stop_gradient(g), which is zero in the forward pass; the values
# are hand-written per-example gradients.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    auto = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    r = 2.0 * (h @ params["w2"] + params["b2"] - y)
    dh = r[:, None] * params["w2"] * (1.0 - h ** 2)
    hand = {"w1": jnp.einsum("bd,bh->bdh", x, dh), "b1": dh, "w2": r[:, None] * h, "b2": r}
    grads = jax.tree.map(lambda h_, a: h_ + (a - jax.lax.stop_gradient(a)), hand, auto)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(x.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / x.shape[0], grads), "norms": norms}
