"""Two checkpointed regions, neither of which has everything row 3 asks for: the loss comes from the block
checkpointed with `dots_saveable` but never differentiated (it is evaluated outside `jax.grad`), and the
gradients come from the block checkpointed with the default policy inside `jax.grad`. Row 1 holds (a
`dots_saveable` region wraps the whole block and computes the loss) and row 2 holds (a checkpoint is
differentiated inside `jax.grad`), but no single region is differentiated, holds the tanh *and* uses
`dots_saveable`.

expect: requirements_not_met
fails: tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def _block(params, x):
    return x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    saving = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)
    plain = jax.checkpoint(_block)
    loss = jnp.mean((saving(params, x) - y) ** 2)
    grads = jax.grad(lambda p: jnp.mean((plain(p, x) - y) ** 2))(params)
    return {"loss": loss, "grads": grads}
