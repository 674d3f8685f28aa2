"""One `jax.tree.map` over the four trees returning a triple per leaf, split with `jax.tree.transpose`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t

    def step(p, g, m, v):
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g * g + b2 * v
        update = (m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p
        return (p - lr * update, m, v)

    triples = jax.tree.map(step, params, grads, mu, nu)
    new_params, new_mu, new_nu = jax.tree.transpose(jax.tree.structure(params), jax.tree.structure((0, 0, 0)),
                                                    triples)
    return {"params": new_params, "mu": new_mu, "nu": new_nu, "count": t}
