"""`jnp.piecewise` over three conditions on the step (it lowers to `lax.switch`).

expect: accepted
fails: none
"""
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    span = total_steps - warmup_steps
    return jnp.piecewise(
        t,
        [t < warmup_steps, (t >= warmup_steps) & (t < total_steps), t >= total_steps],
        [lambda s: base_lr * (s + 1) / max(warmup_steps, 1),
         lambda s: min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * (s - warmup_steps) / span)),
         lambda s: min_lr + 0.0 * s],
    )
