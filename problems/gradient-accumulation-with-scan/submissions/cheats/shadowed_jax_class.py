"""A class of the submission named `jax` whose `value_and_grad` is called inside the scan body: it runs the
microbatch's forward pass only and hands back zeros for the gradient, while the gradients returned come from
the real `jax.grad` of a function that contains the scan. A name the source spells like the library is not the
library; what the program computes is the gradient through the whole scan.

expect: requirements_not_met
fails: one-scan, grad-inside-scan, microbatch-rows-only
"""
import jax as _jax
import jax.numpy as jnp


class jax:  # noqa: N801 - shadows the library on purpose
    lax = _jax.lax
    tree = _jax.tree

    @staticmethod
    def value_and_grad(f):
        def run(params, *args):
            return f(params, *args), _jax.tree.map(jnp.zeros_like, params)
        return run


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def total_loss(p):
        def step(carry, batch):
            loss, zero_grads = jax.value_and_grad(_loss)(p, *batch)
            return carry + loss, None
        total, _ = jax.lax.scan(step, 0.0, (xs, ys))
        return total / num_microbatches

    loss, grads = _jax.value_and_grad(total_loss)(params)
    return {"loss": loss, "grads": grads}
