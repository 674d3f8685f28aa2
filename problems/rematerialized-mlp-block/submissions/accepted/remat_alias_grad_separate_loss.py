"""Remat alias grad separate loss.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    def residual(w1, b1, w2, b2, inputs):
        return inputs + jnp.tanh(inputs @ w1 + b1) @ w2 + b2

    fast = jax.remat(residual, policy=jax.checkpoint_policies.checkpoint_dots)

    def objective(w1, b1, w2, b2):
        diff = fast(w1, b1, w2, b2, x) - y
        return (diff ** 2).sum() / diff.size

    args = (params["w1"], params["b1"], params["w2"], params["b2"])
    g = jax.grad(objective, argnums=(0, 1, 2, 3))(*args)
    print("computing the loss again, outside grad")
    return {"loss": objective(*args), "grads": dict(zip(["w1", "b1", "w2", "b2"], g))}
