"""A primitive of its own named `select_n`, whose implementation and lowering mask the phases: only named
like JAX's select. The grader cannot see inside it, so it confirms none of the requirements.

expect: requirements_not_met
fails: no-host-callback, no-step-table, select-not-mask
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

select_p = Primitive("select_n")


def _impl(pred, on_false, on_true):
    mask = pred.astype(on_true.dtype)
    return mask * on_true + (1 - mask) * on_false


select_p.def_impl(_impl)
select_p.def_abstract_eval(lambda pred, a, b: jax.core.ShapedArray(a.shape, a.dtype))
mlir.register_lowering(select_p, mlir.lower_fun(_impl, multiple_results=False))


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    t = jnp.asarray(step, jnp.float32)
    warm = base_lr * (t + 1) / max(warmup_steps, 1)
    progress = (t - warmup_steps) / (total_steps - warmup_steps)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    decay = select_p.bind(step >= total_steps, decay, jnp.asarray(min_lr, jnp.float32))
    return select_p.bind(step < warmup_steps, decay, warm)
