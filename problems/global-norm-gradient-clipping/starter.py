import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    """Clip a gradient pytree by its global norm, as
    optax.clip_by_global_norm(max_norm) does.

    Returns {"grads": clipped_grads (same structure as grads),
    "global_norm": the norm before clipping}.
    """
    raise NotImplementedError
