"""The powers written as exp(t * log(b)) (b1 = 0 gives exp(-inf) = 0, as it should), one `jax.tree.map` per
quantity.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = jnp.asarray(count, jnp.int32) + 1
    tf = t.astype(jnp.float32)
    c1 = 1.0 - jnp.exp(tf * jnp.log(b1))
    c2 = 1.0 - jnp.exp(tf * jnp.log(b2))
    new_mu = jax.tree.map(lambda m, g: b1 * m + (1.0 - b1) * g, mu, grads)
    new_nu = jax.tree.map(lambda v, g: b2 * v + (1.0 - b2) * jnp.square(g), nu, grads)
    new_params = jax.tree.map(
        lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p), params, new_mu, new_nu)
    return {"params": new_params, "mu": new_mu, "nu": new_nu, "count": t}
