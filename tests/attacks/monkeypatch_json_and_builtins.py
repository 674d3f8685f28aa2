# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: replaces json.dumps and builtins.isinstance
import builtins, json
_dumps, _isinstance = json.dumps, builtins.isinstance
json.dumps = lambda obj, *a, **k: _dumps(obj, *a, **k)
builtins.isinstance = lambda o, t: _isinstance(o, t)

import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def step(carry, batch):
        loss_sum, grad_sum = carry
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grads)), None

    zeros = jax.tree.map(jnp.zeros_like, params)
    (loss_sum, grad_sum), _ = jax.lax.scan(step, (jnp.float32(0.0), zeros), (xs, ys))
    return {
        "loss": loss_sum / num_microbatches,
        "grads": jax.tree.map(lambda g: g / num_microbatches, grad_sum),
    }
