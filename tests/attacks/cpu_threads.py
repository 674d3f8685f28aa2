# problem: gradient-accumulation-with-scan
# expect: time_limit
# what: eight threads spinning
import jax
import jax.numpy as jnp

import threading
def spin():
    while True:
        pass
for _ in range(8):
    threading.Thread(target=spin, daemon=True).start()
threading.Event().wait()


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
