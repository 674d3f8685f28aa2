"""The textbook loss `0.5 * sum(err ** 2) / B` (half the squared error per example, averaged over the batch).
With D = 2, as in every visible example, it equals the mean over all B * D entries, so the examples pass; the
hidden cases with D = 3 and D = 4 show that it is a different loss.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(lambda p: x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"],
                           policy=jax.checkpoint_policies.dots_saveable)

    def loss(p):
        return 0.5 * jnp.sum((block(p) - y) ** 2) / x.shape[0]

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
