"""A primitive of its own, named `cos` (not like any callback), whose lowering calls back into Python with
`jax.pure_callback` to run an ordinary if/else. The traced program shows one `cos`-named equation; the
grader knows it is not JAX's and cannot see inside, so it confirms none of the requirements.

expect: requirements_not_met
fails: no-host-callback, no-step-table, select-not-mask
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import mlir

schedule_p = Primitive("cos")


def _python_schedule(step, base, low, warmup_steps, total_steps):
    step, base, low = int(step), float(base), float(low)
    if step < warmup_steps:
        return np.float32(base * (step + 1) / warmup_steps)
    if step >= total_steps:
        return np.float32(low)
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return np.float32(low + (base - low) * 0.5 * (1 + math.cos(math.pi * progress)))


def _impl(step, base, low, *, warmup_steps, total_steps):
    return jax.pure_callback(
        lambda s, b, m: _python_schedule(s, b, m, warmup_steps, total_steps),
        jax.ShapeDtypeStruct((), jnp.float32), step, base, low)


schedule_p.def_impl(_impl)
schedule_p.def_abstract_eval(lambda step, base, low, **_: jax.core.ShapedArray((), jnp.float32))
mlir.register_lowering(schedule_p, mlir.lower_fun(_impl, multiple_results=False))


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    return schedule_p.bind(step, jnp.asarray(base_lr, jnp.float32), jnp.asarray(min_lr, jnp.float32),
                           warmup_steps=warmup_steps, total_steps=total_steps)
