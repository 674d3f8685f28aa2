# problem: gradient-accumulation-with-scan
# expect: runtime_error
# what: walks up from its scratch folder to the fork server's scratch root, lists and writes the other workers' folders
import jax
import jax.numpy as jnp

import os
here = os.getcwd()
root = os.path.dirname(here)
print(here, os.listdir(root))
for name in os.listdir(root):
    print(name, os.listdir(os.path.join(root, name)))
open(os.path.join(root, "planted.py"), "w").write("print('planted')\n")


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
