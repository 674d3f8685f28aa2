# problem: rematerialized-mlp-block
# expect: time_limit
# what: ignores every catchable signal and sleeps
import jax
import jax.numpy as jnp

import signal, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU, signal.SIGHUP, signal.SIGALRM):
    signal.signal(s, signal.SIG_IGN)
time.sleep(10 ** 6)


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
