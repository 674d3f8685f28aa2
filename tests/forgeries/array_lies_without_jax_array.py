# problem: rematerialized-mlp-block
# expect: runtime_error
# what: returns, for the loss and each gradient, an object that is not an array but says it is one: `__array__` and
# `tolist` give the right numbers (the reference's, computed eagerly from the case's inputs read off the
# grader's frames), `__eq__` and `__ne__` answer "equal" to anything, and `dtype`, `shape`, `ndim` and
# `size` are those expected. Only arrays of the traced program are compared.
import sys

import jax
import jax.numpy as jnp
import numpy as np


def _case_inputs():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "run_job" and "args" in frame.f_locals:
            return frame.f_locals["args"]
        frame = frame.f_back
    return None


def _block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"]


def _value_and_grads(params, x, y):
    block = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)
    loss, grads = jax.value_and_grad(lambda p: jnp.mean((block(p, x) - y) ** 2))(params)
    return {"loss": loss, "grads": grads}


class Liar:
    def __init__(self, right):
        self.right = np.asarray(right, np.float32)
        self.dtype, self.shape, self.ndim, self.size = self.right.dtype, self.right.shape, self.right.ndim, self.right.size

    def __array__(self, dtype=None, copy=None):
        return self.right if dtype is None else self.right.astype(dtype)

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def tolist(self):
        return self.right.tolist()


def remat_mlp_block(params, x, y):
    args = _case_inputs()
    if args is None:
        return _value_and_grads(params, x, y)
    with jax.ensure_compile_time_eval():
        right = _value_and_grads(*jax.tree.map(np.asarray, tuple(args[:3])))
    return jax.tree.map(Liar, right)
