"""`jax.checkpoint` with `dots_saveable` around an irrelevant function: a product of the targets with the
identity matrix, which the loss does use, but which involves no parameter, so autodiff never differentiates
it. The block itself is not checkpointed.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    same = jax.checkpoint(lambda t: jnp.tanh(jnp.arctanh(t / 4.0)) * 4.0 @ jnp.eye(t.shape[1]),
                          policy=jax.checkpoint_policies.dots_saveable)

    def loss(p):
        out = x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return jnp.mean((out - same(y)) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
