import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, lr, momentum):
    """One SGD-with-momentum step over pytrees of the same structure.

    Returns {"params": new_params, "velocity": new_velocity}, each with
    the structure of `params`.
    """
    raise NotImplementedError
