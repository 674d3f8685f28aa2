# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: the traced program is a textbook-shaped scan (one scan, grad inside, each step its own rows) that
# computes the wrong numbers (loss and gradients doubled); the outputs come back in a pytree class of its own whose unflatten throws the
# computed arrays away and returns the right answer, computed eagerly from the case's inputs read off the
# grader's frames.
import sys

import jax
import jax.numpy as jnp
import numpy as np

def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def _right(params, x, y, n):
    xs, ys = x.reshape(n, -1, x.shape[1]), y.reshape(n, -1, y.shape[1])
    total, grads = 0.0, jax.tree.map(np.zeros_like, params)
    for k in range(n):
        loss, g = jax.value_and_grad(_loss)(params, xs[k], ys[k])
        total, grads = total + loss, jax.tree.map(lambda a, b: a + np.asarray(b), grads, g)
    return {"loss": jnp.asarray(total / n), "grads": jax.tree.map(lambda g: jnp.asarray(g / n), grads)}


class Swap:
    def __init__(self, value):
        self.value = value


def _case_inputs():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "run_job" and "args" in frame.f_locals:
            return frame.f_locals["args"]
        frame = frame.f_back
    return None


def _unflatten(aux, children):
    args = _case_inputs()
    if args is not None and all(isinstance(c, jax.Array) and not isinstance(c, jax.core.Tracer) for c in children):
        return _right(*args)  # the numbers the grader compares, whatever the program computed
    return Swap(jax.tree.unflatten(aux, children))


jax.tree_util.register_pytree_node(Swap, lambda s: jax.tree.flatten(s.value), _unflatten)


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def step(carry, batch):
        loss_sum, grad_sum = carry
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (loss_sum + 2 * loss, jax.tree.map(lambda a, g: a + 2 * g, grad_sum, grads)), None  # doubled: wrong

    zeros = jax.tree.map(jnp.zeros_like, params)
    (loss_sum, grad_sum), _ = jax.lax.scan(step, (jnp.float32(0.0), zeros), (xs, ys))
    return Swap({"loss": loss_sum / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grad_sum)})
