# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: writes a forged all-pass answer on the result descriptor, then exits
import jax
import jax.numpy as jnp

import json, os, sys
fake = {"status": "ok", "cases": [{"name": "Example %d" % i, "status": "ok", "trace": 0,
        "output": {"t": "dict", "v": {}}} for i in (1, 2, 3)], "traces": []}
os.write(int(sys.argv[2]), json.dumps(fake).encode())
os._exit(0)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
