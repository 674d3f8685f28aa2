"""A `lax.while_loop` that walks the schedule one step at a time until it reaches `step`, carrying the
phase it is in.

expect: requirements_not_met
fails: no-step-table
"""
import jax
import jax.numpy as jnp


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    def cond(state):
        return state[0] < step

    def body(state):
        i, _ = state
        return i + 1, (i + 1 >= warmup_steps)

    _, after_warmup = jax.lax.while_loop(cond, body, (jnp.int32(0), jnp.asarray(warmup_steps <= 0)))
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(after_warmup, decay, warm)
