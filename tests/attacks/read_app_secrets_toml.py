# problem: rematerialized-mlp-block
# expect: runtime_error
# what: finds the app's folder from the child's path and reads .streamlit/secrets.toml
import jax
import jax.numpy as jnp

import os, sys
here = os.path.dirname(os.path.abspath(sys.argv[0]))
for up in (here, os.path.dirname(here), os.path.dirname(os.path.dirname(here))):
    path = os.path.join(up, '.streamlit', 'secrets.toml')
    if os.path.exists(path) or up == os.path.dirname(here):
        print(open(path).read())


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
