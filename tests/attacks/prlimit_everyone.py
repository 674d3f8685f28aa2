# problem: traced-learning-rate-schedule
# expect: runtime_error
# what: sets RLIMIT_CPU to 1 s and RLIMIT_NOFILE to 8 on every process it can name (the server, the fork server, other learners' runs); accepted if any took
import jax
import jax.numpy as jnp

import os, resource
hits, mine = [], {int(t) for t in os.listdir("/proc/self/task")}  # its own threads are itself
for pid in range(1, 3000):
    if pid in mine:
        continue
    for which, value in ((resource.RLIMIT_CPU, (1, 1)), (resource.RLIMIT_NOFILE, (8, 8))):
        try:
            resource.prlimit(pid, which, value)
            hits.append(pid)
        except OSError:
            pass


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    if not hits:
        raise RuntimeError("prlimit on every other process was refused")
    t = jnp.asarray(step, jnp.float32)
    warmup = base_lr * (t + 1.0) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
    return jnp.where(step < warmup_steps, warmup, decay)
