# problem: gradient-accumulation-with-scan
# expect: time_limit
# what: spins on every core while ignoring SIGXCPU, the CPU limit's warning
import jax
import jax.numpy as jnp

import signal, threading
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
def spin():
    while True:
        pass
for _ in range(4):
    threading.Thread(target=spin, daemon=True).start()
spin()


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
