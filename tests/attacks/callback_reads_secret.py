# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: reads the secret from a jax.debug.callback, which runs on an XLA thread
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    def leak(v):
        print(open('/tmp/jaxplay-canary/secret.txt').read(), v)
    jax.debug.callback(leak, x.sum())
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
