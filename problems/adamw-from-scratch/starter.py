import jax
import jax.numpy as jnp


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps,
                 weight_decay):
    """One AdamW step over pytrees of the same structure (optax.adamw's
    update).

    `count` is the number of steps already taken (a traced int32).
    Returns
    {"params": new_params, "mu": new_mu, "nu": new_nu, "count": count +
    1}.
    """
    raise NotImplementedError
