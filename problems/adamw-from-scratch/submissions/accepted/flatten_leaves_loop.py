"""`tree_flatten` and a Python loop over the leaves (never over keys), then `tree_unflatten`, under a
`jax.jit` of the inner step.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


@jax.jit
def _leaf_step(p, g, m, v, c1, c2, lr, b1, b2, eps, wd):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    return p - lr * (m / c1 / (jnp.sqrt(v / c2) + eps) + wd * p), m, v


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    t = count + 1
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    outs = [_leaf_step(p, g, m, v, c1, c2, lr, b1, b2, eps, weight_decay)
            for p, g, m, v in zip(leaves, treedef.flatten_up_to(grads), treedef.flatten_up_to(mu),
                                  treedef.flatten_up_to(nu))]
    unflat = lambda i: jax.tree_util.tree_unflatten(treedef, [o[i] for o in outs])
    return {"params": unflat(0), "mu": unflat(1), "nu": unflat(2), "count": t}
