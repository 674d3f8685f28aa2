# problem: traced-learning-rate-schedule
# expect: output_limit
# says: key of
# what: returns a dictionary whose key is a million characters long
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    return {"k" * 1_000_000: jnp.asarray(base_lr)}
