"""Broadcasting layers no matmul.

expect: accepted
fails: none
"""
import jax, jax.numpy as jnp
def loss_fn(p, x, y):
    h = jnp.tanh((x[:, :, None] * p["w1"][None]).sum(1) + p["b1"])
    o = (h[:, :, None] * p["w2"][None]).sum(1) + p["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]
def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs = x.reshape(n, -1, x.shape[1]); ys = y.reshape(n, -1, y.shape[1])
    def step(c, b):
        l, g = jax.value_and_grad(loss_fn)(params, *b)
        return (c[0] + l, jax.tree.map(jnp.add, c[1], g)), None
    (l, g), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    return {"loss": l / n, "grads": jax.tree.map(lambda t: t / n, g)}
