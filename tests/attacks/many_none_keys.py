# problem: traced-learning-rate-schedule
# expect: output_limit
# says: more than the grader reads
# what: returns 300,000 extra None keys per case (free against the array element budget), to make the server build a huge answer
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    out = {f"k{i}": None for i in range(300_000)}
    out["rate"] = jnp.asarray(base_lr)
    return out
