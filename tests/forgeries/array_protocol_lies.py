# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: returns, in place of arrays, objects that lie about themselves: `__array__` gives the right numbers
# (computed eagerly from the case's inputs read off the grader's frames), `__eq__` says equal to anything,
# `dtype` and `shape` say float32 and the expected shape, and `__jax_array__` hands tracing the doubled
# (wrong) arrays of a textbook scan. Nothing of the object may reach the comparison: an output leaf must be
# an array of the traced program.
import sys

import jax
import jax.numpy as jnp
import numpy as np


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def _case_inputs():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "run_job" and "args" in frame.f_locals:
            return frame.f_locals["args"]
        frame = frame.f_back
    return None


def _right(params, x, y, n):
    with jax.ensure_compile_time_eval():  # eager numbers, even while the grader traces
        return _eager(*jax.tree.map(np.asarray, (params, x, y)), n)


def _eager(params, x, y, n):
    xs, ys = x.reshape(n, -1, x.shape[1]), y.reshape(n, -1, y.shape[1])
    total, grads = 0.0, jax.tree.map(np.zeros_like, params)
    for k in range(n):
        loss, g = jax.value_and_grad(_loss)(params, xs[k], ys[k])
        total, grads = total + loss, jax.tree.map(lambda a, b: a + np.asarray(b), grads, g)
    return {"loss": np.float32(total / n), "grads": jax.tree.map(lambda g: (g / n).astype(np.float32), grads)}


class Liar:
    def __init__(self, traced, right):
        self.traced, self.right = traced, np.asarray(right, np.float32)
        self.dtype, self.shape, self.ndim, self.size = np.dtype("float32"), self.right.shape, self.right.ndim, self.right.size

    def __jax_array__(self):
        return self.traced

    def __array__(self, dtype=None, copy=None):
        return self.right if dtype is None else self.right.astype(dtype)

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__

    def tolist(self):
        return self.right.tolist()

    def __float__(self):
        return float(self.right)


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def step(carry, batch):
        loss_sum, grad_sum = carry
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (loss_sum + 2 * loss, jax.tree.map(lambda a, g: a + 2 * g, grad_sum, grads)), None  # doubled: wrong

    zeros = jax.tree.map(jnp.zeros_like, params)
    (loss_sum, grad_sum), _ = jax.lax.scan(step, (jnp.float32(0.0), zeros), (xs, ys))
    traced = {"loss": loss_sum / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grad_sum)}
    args = _case_inputs()
    right = _right(*args) if args is not None else jax.tree.map(lambda a: np.zeros(a.shape, np.float32), traced)
    return jax.tree.map(Liar, traced, right)
