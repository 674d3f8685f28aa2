# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: makes an HTTP request to the app on loopback while being traced
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    import urllib.request
    urllib.request.urlopen('http://127.0.0.1:47471/', timeout=3)
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
