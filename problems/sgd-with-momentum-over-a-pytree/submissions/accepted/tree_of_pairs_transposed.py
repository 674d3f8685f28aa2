"""One `jax.tree.map` that returns a (params, velocity) pair per leaf, split into two trees with
`jax.tree.transpose`, as some libraries write a fused update.

expect: accepted
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    def step(p, g, v):
        v = momentum * v + g
        return (p - lr * v, v)

    pairs = jax.tree.map(step, params, grads, velocity)
    outer = jax.tree.structure(params)
    inner = jax.tree.structure((0, 0))
    new_params, new_velocity = jax.tree.transpose(outer, inner, pairs)
    return {"params": new_params, "velocity": new_velocity}
