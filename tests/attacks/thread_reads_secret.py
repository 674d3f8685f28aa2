# problem: rematerialized-mlp-block
# expect: runtime_error
# what: reads the secret from a new thread and re-raises what it got
import jax
import jax.numpy as jnp

import threading
box = []
def grab():
    try:
        box.append(open('/tmp/jaxplay-canary/secret.txt').read())
    except BaseException as exc:
        box.append(exc)
t = threading.Thread(target=grab)
t.start()
t.join()
if isinstance(box[0], BaseException):
    raise box[0]
print(box[0])


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
