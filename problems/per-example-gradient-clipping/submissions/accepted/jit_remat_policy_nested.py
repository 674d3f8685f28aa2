"""jit, remat with a policy, nested transforms.

expect: accepted
fails: none
"""
# maxtext-style nesting: the per-example loss is wrapped in jax.remat with a checkpoint policy alias, its
# gradient is vmapped, and the whole per-example gradient function is jitted; norms with jnp.linalg.norm of
# each leaf and a stacked sum of squares.
import jax
import jax.numpy as jnp


def loss(p, xn, yn):
    h = jnp.tanh(jnp.dot(xn, p["w1"]) + p["b1"])
    return jnp.square(jnp.dot(h, p["w2"]) + p["b2"] - yn)


per_example_grads = jax.jit(jax.vmap(jax.grad(jax.remat(loss, policy=jax.checkpoint_policies.dots_saveable)),
                                     in_axes=(None, 0, 0)))


def clipped_mean_grad(params, x, y, max_norm):
    grads = per_example_grads(params, x, y)
    b = x.shape[0]
    squares = jnp.stack([jnp.linalg.norm(g.reshape(b, -1), axis=1) ** 2 for g in jax.tree.leaves(grads)])
    norms = jnp.sqrt(squares.sum(axis=0))
    coef = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": {k: jnp.mean(coef.reshape((b,) + (1,) * (g.ndim - 1)) * g, axis=0) for k, g in grads.items()},
            "norms": norms}
