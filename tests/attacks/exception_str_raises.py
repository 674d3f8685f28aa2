# problem: rematerialized-mlp-block
# expect: runtime_error
# what: raises an exception whose message itself raises
import jax
import jax.numpy as jnp

class Nasty(Exception):
    def __str__(self):
        raise RuntimeError('no message for you')
    __repr__ = __str__
raise Nasty()


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
