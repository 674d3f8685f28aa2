"""PyTorch's `AdamW.step` written in JAX: decay the parameter first, `p * (1 - lr * wd)`, then step by
`lr / bias_correction1` along `m / (sqrt(v) / sqrt(bias_correction2) + eps)`; the same update as optax's.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    step = count + 1
    bias_correction1 = 1 - b1 ** step
    bias_correction2 = 1 - b2 ** step
    step_size = lr / bias_correction1

    def leaf(p, g, m, v):
        p = p * (1 - lr * weight_decay)
        m = m * b1 + g * (1 - b1)
        v = v * b2 + g * g * (1 - b2)
        denom = jnp.sqrt(v) / jnp.sqrt(bias_correction2) + eps
        return p - step_size * (m / denom), m, v

    out = jax.tree.map(leaf, params, grads, mu, nu)
    pick = lambda i: jax.tree.map(lambda t: t[i], out, is_leaf=lambda x: isinstance(x, tuple))
    return {"params": pick(0), "mu": pick(1), "nu": pick(2), "count": step}
