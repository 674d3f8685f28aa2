# problem: rematerialized-mlp-block
# expect: wrong_answer
# what: returns a 100-million-element array
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    return {'loss': jnp.zeros((100_000_000,), jnp.float32), 'grads': params}
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
