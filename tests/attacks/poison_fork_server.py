# problem: traced-learning-rate-schedule
# expect: runtime_error
# what: renices its parent (the fork server) to 19, makes it SCHED_IDLE, pins it to one CPU and lowers its file limit, so every later worker would inherit it; accepted if any took
import jax
import jax.numpy as jnp

import os, resource
parent, hits = os.getppid(), []
for name, change in (("nice", lambda: os.setpriority(os.PRIO_PROCESS, parent, 19)),
                     ("SCHED_IDLE", lambda: os.sched_setscheduler(parent, os.SCHED_IDLE, os.sched_param(0))),
                     ("affinity", lambda: os.sched_setaffinity(parent, {0})),
                     ("NOFILE", lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE, (16, 16)))):
    try:
        change()
        hits.append(name)
    except OSError:
        pass


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    if not hits:
        raise RuntimeError("its parent refused every change")
    t = jnp.asarray(step, jnp.float32)
    warmup = base_lr * (t + 1.0) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
    return jnp.where(step < warmup_steps, warmup, decay)
