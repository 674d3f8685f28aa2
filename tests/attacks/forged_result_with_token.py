# problem: gradient-accumulation-with-scan
# expect: wrong_answer runtime_error
# what: finds the run's token in the grader's stack frame and forges an all-pass answer with it
import jax
import jax.numpy as jnp

import json, os, sys
frame, token = sys._getframe(), None
while frame is not None and token is None:
    token = frame.f_locals.get('nonce')
    frame = frame.f_back
fake = {"status": "ok", "nonce": token, "traces": [], "cases": [
    {"name": "Example %d" % i, "status": "ok", "trace": 0,
     "output": {"t": "dict", "v": {"loss": {"t": "array", "dtype": "float32", "shape": [], "v": 0.0}}}}
    for i in (1, 2, 3)]}
os.write(int(sys.argv[2]), json.dumps(fake).encode())
os._exit(0)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
