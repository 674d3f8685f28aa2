# problem: rematerialized-mlp-block
# expect: runtime_error output_limit
# what: fills its scratch folder with 8 MiB files until something stops it
import jax
import jax.numpy as jnp

chunk = b'x' * (8 << 20)
for i in range(200):
    with open(f'fill{i}.bin', 'wb') as f:
        f.write(chunk)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
