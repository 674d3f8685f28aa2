# problem: rematerialized-mlp-block
# expect: runtime_error
# what: reads the child's own source and the grader modules next to it
import jax
import jax.numpy as jnp

import glob, os, sys
here = os.path.dirname(os.path.abspath(sys.argv[0]))
print(sorted(glob.glob(here + '/*')))
for name in ('child.py', 'lockdown.py', 'grade.py'):
    print(open(os.path.join(here, name)).read()[:300])


def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
