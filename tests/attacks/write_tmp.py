# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: writes files into /tmp and next to the canary
import jax
import jax.numpy as jnp

open('/tmp/jaxplay-canary/pwned.txt', 'w').write('pwned')
open('/tmp/pwned.txt', 'w').write('pwned')


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
