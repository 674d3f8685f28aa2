"""NumPy eye basis.

expect: requirements_not_met
fails: no-batch-jacobian
"""
# Right numbers and one batched backward pass, but a Jacobian built by hand with a basis the program
# captures as a NumPy constant (np.eye(B)), pulled back through the whole batch by a vmapped vjp.
import jax
import jax.numpy as jnp
import numpy as np


def clipped_mean_grad(params, x, y, max_norm):
    def losses(p):
        return (jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2

    n = x.shape[0]
    _, pullback = jax.vjp(losses, params)
    (grads,) = jax.vmap(pullback)(np.eye(n, dtype=np.float32))
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
