# problem: gradient-accumulation-with-scan
# expect: wrong_answer runtime_error
# what: returns a dict nested 500 deep
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    out = x.sum()
    for _ in range(500):
        out = {'a': out}
    return out
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
