"""optax style: a warmup schedule and a cosine-decay schedule (the alpha form, `init * ((1 - alpha) *
cosine + alpha)`) joined at the boundary with `jnp.where`, as `optax.join_schedules` does.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def linear_warmup(base_lr, warmup_steps):
    def schedule(count):
        return base_lr * (count + 1) / warmup_steps
    return schedule


def cosine_decay_schedule(init_value, decay_steps, alpha):
    def schedule(count):
        count = jnp.minimum(count, decay_steps)
        cosine = 0.5 * (1 + jnp.cos(jnp.pi * count / decay_steps))
        return init_value * ((1 - alpha) * cosine + alpha)
    return schedule


def join_schedules(schedules, boundaries):
    def schedule(step):
        output = schedules[0](step)
        for boundary, fn in zip(boundaries, schedules[1:]):
            output = jnp.where(step < boundary, output, fn(step - boundary))
        return output
    return schedule


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    decay = cosine_decay_schedule(base_lr, total_steps - warmup_steps, min_lr / base_lr)
    if warmup_steps == 0:
        return decay(step)
    return join_schedules([linear_warmup(base_lr, warmup_steps), decay], [warmup_steps])(step)
