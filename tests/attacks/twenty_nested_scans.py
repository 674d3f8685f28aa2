# problem: traced-learning-rate-schedule
# expect: time_limit wrong_answer
# within: 90
# what: one-step lax.scans nested twenty-four deep, each starting from a constant: a few tens of KB of jaxpr that cost a requirement check's data-flow walk minutes (the twenty, and four more so that even a fast machine needs minutes without the check budget)
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    s = jnp.asarray(step, jnp.float32)

    def nest(c, depth):
        if depth == 0:
            return c + s
        def body(carry, _):
            return carry + nest(jnp.zeros((), jnp.float32), depth - 1), None
        out, _ = jax.lax.scan(body, c, None, length=1)
        return out
    t = nest(jnp.zeros((), jnp.float32), 24)
    return jnp.where(t < warmup_steps, base_lr, min_lr) * 0.0
