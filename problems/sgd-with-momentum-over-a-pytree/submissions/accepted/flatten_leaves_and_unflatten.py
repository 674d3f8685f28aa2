"""`jax.tree_util.tree_flatten` and a Python loop over the *leaves* (not over keys): the tree's structure is
read from the data, so any nesting works, and each leaf is updated on its own.

expect: accepted
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    grad_leaves = treedef.flatten_up_to(grads)
    velocity_leaves = treedef.flatten_up_to(velocity)
    new_params, new_velocity = [], []
    for p, g, v in zip(leaves, grad_leaves, velocity_leaves):
        v = momentum * v + g
        new_velocity.append(v)
        new_params.append(p - lr * v)
    return {"params": jax.tree_util.tree_unflatten(treedef, new_params),
            "velocity": jax.tree_util.tree_unflatten(treedef, new_velocity)}
