# problem: rematerialized-mlp-block
# expect: memory_limit
# what: grows memory 64 MiB at a time, touching every page
import jax
import jax.numpy as jnp

blocks = []
while True:
    blocks.append(bytearray(b'x') * (64 << 20))  # one pass over the new pages, not two


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
