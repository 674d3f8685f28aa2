# problem: rematerialized-mlp-block
# expect: runtime_error
# what: returns objects whose == always says True
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    class Liar:
        def __eq__(self, other):
            return True
        def __ne__(self, other):
            return False
    return {"loss": Liar(), "grads": {k: Liar() for k in params}}
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
