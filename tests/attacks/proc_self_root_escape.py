# problem: rematerialized-mlp-block
# expect: runtime_error
# what: reaches the secret through /proc/self/root and /proc/self/cwd/..
import jax
import jax.numpy as jnp

print(open('/proc/self/root/tmp/jaxplay-canary/secret.txt').read())
print(open('/proc/self/cwd/../jaxplay-canary/secret.txt').read())


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
