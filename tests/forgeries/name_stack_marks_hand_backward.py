# problem: gradient-accumulation-with-scan
# expect: accepted
# what: one scan over the microbatches whose body writes the backward pass out by hand (no `jax.grad`
# anywhere), its equations wrapped in JAX's own name-stack context so that they carry the marks autodiff
# leaves: `jvp(...)` on the forward pass, `transpose(jvp(...))` on the backward pass. No patching of
# anything. The numbers are right, and each step computes its microbatch's loss and gradient (a backward
# pass written by hand is the learner's choice): accepted because of what the rebuilt program computes, and
# the same verdict without the marks.
import jax
import jax.numpy as jnp
from jax._src import source_info_util


def _forward_and_backward(params, x, y):
    with source_info_util.transform_name_stack("jvp"):
        z = x @ params["w1"] + params["b1"]
        h = jnp.tanh(z)
        o = h @ params["w2"] + params["b2"]
        loss = jnp.sum((o - y) ** 2) / x.shape[0]
    with source_info_util.transform_name_stack("transpose"), source_info_util.transform_name_stack("jvp"):
        r = 2.0 * (o - y) / x.shape[0]
        dz = (r @ params["w2"].T) * (1.0 - h ** 2)
        grads = {"w1": x.T @ dz, "b1": dz.sum(0), "w2": h.T @ r, "b2": r.sum(0)}
    return loss, grads


def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs, ys = x.reshape(n, -1, x.shape[1]), y.reshape(n, -1, y.shape[1])

    def step(carry, batch):
        loss, grads = _forward_and_backward(params, *batch)
        return jax.tree.map(jnp.add, carry, (loss, grads)), None

    (loss, grads), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    return {"loss": loss / n, "grads": jax.tree.map(lambda g: g / n, grads)}
