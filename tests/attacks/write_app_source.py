# problem: rematerialized-mlp-block
# expect: runtime_error
# what: overwrites the grader's and the problems' source next to the child
import jax
import jax.numpy as jnp

import os, sys
here = os.path.dirname(os.path.abspath(sys.argv[0]))
open(os.path.join(here, 'pwned.py'), 'w').write('pwned = True')
open(os.path.join(os.path.dirname(here), 'problems', 'pwned.txt'), 'w').write('pwned')


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
