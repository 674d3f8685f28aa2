"""Mean over outputs too.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.mean((o - y) ** 2)  # divides by S * K, not by S


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def step(carry, batch):
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (carry[0] + loss, jax.tree.map(jnp.add, carry[1], grads)), None

    (loss, grads), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    return {"loss": loss / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grads)}
