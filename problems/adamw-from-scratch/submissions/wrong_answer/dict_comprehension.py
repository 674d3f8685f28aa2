"""A dict comprehension over the top-level keys: fine on a flat dict, and it raises on the hidden trees that
nest dicts and lists or are a single array.

expect: runtime_error
fails: leaf-by-leaf, decoupled-weight-decay, bias-correction-from-count, no-host-callback
"""
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    t = count + 1
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    new_mu = {k: (1 - b1) * grads[k] + b1 * mu[k] for k in params}
    new_nu = {k: (1 - b2) * grads[k] ** 2 + b2 * nu[k] for k in params}
    new_params = {k: params[k] - lr * ((new_mu[k] / c1) / (jnp.sqrt(new_nu[k] / c2) + eps) + weight_decay * params[k])
                  for k in params}
    return {"params": new_params, "mu": new_mu, "nu": new_nu, "count": t}
