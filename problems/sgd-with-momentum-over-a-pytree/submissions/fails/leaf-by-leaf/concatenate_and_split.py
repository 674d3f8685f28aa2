"""The leaves concatenated by hand with `jnp.concatenate` and cut back with `jnp.split`, keeping the
structure with `tree_flatten`/`tree_unflatten`. Generic and right, but not leaf by leaf.

expect: requirements_not_met
fails: leaf-by-leaf
"""
import jax
import jax.numpy as jnp
import numpy as np


def sgd_momentum(params, grads, velocity, lr, momentum):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    shapes = [jnp.shape(x) for x in leaves]
    cuts = list(np.cumsum([int(np.prod(s)) for s in shapes])[:-1])

    def flat(tree):
        return jnp.concatenate([jnp.ravel(x) for x in treedef.flatten_up_to(tree)])

    def unflat(vector):
        return jax.tree_util.tree_unflatten(treedef, [piece.reshape(s) for piece, s in zip(jnp.split(vector, cuts), shapes)])

    v = momentum * flat(velocity) + flat(grads)
    return {"params": unflat(flat(params) - lr * v), "velocity": unflat(v)}
