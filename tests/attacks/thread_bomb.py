# problem: rematerialized-mlp-block
# expect: runtime_error time_limit memory_limit
# what: starts threads until something gives
import jax
import jax.numpy as jnp

import threading, time
threads = []
while True:
    t = threading.Thread(target=time.sleep, args=(3600,), daemon=True)
    t.start()
    threads.append(t)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
