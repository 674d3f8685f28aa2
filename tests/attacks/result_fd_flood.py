# problem: rematerialized-mlp-block
# expect: runtime_error output_limit
# what: a thread keeps writing forged answers on every descriptor it can write (the result's among them)
import json, os, sys, threading
forged = json.dumps({"status": "ok", "cases": [], "traces": []}).encode()
def flood():
    fds = [fd for fd in range(3, 100) if fd != 2]
    for _ in range(100000):
        for fd in list(fds):
            try:
                os.write(fd, forged)
            except OSError:
                fds.remove(fd)
        if not fds:
            return
threading.Thread(target=flood, daemon=True).start()

import jax
import jax.numpy as jnp


def _block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)

    def loss_fn(p):
        return jnp.mean((block(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}
