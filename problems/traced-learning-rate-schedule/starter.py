import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    """Linear warmup, then cosine decay from base_lr to min_lr, for a
    traced step.

    step: traced int32 scalar; base_lr, min_lr: f32[]; warmup_steps,
    total_steps: Python ints.
    Returns f32[].
    """
    # TODO: compute both phases from jnp.asarray(step, jnp.float32) and
    # choose with jnp.where
    # (a Python `if` on `step` fails, because it is traced).
    raise NotImplementedError
