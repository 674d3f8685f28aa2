# problem: rematerialized-mlp-block
# expect: runtime_error
# what: reads /etc/shadow, /etc/passwd and root's shell history
import jax
import jax.numpy as jnp

for f in ('/etc/passwd', '/etc/shadow', '/root/.bash_history'):
    print(open(f).read())


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
