"""A Python loop over the leaves (`tree_flatten`, update, `tree_unflatten`), set beside `jax.tree.map` in
the insight: the loop is unrolled while tracing, so both trace to the same per-leaf program."""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    new_p, new_v = [], []
    for p, g, v in zip(leaves, treedef.flatten_up_to(grads), treedef.flatten_up_to(velocity)):
        v = momentum * v + g
        new_v.append(v)
        new_p.append(p - lr * v)
    return {"params": treedef.unflatten(new_p), "velocity": treedef.unflatten(new_v)}
