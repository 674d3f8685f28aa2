"""One `jax.tree.map` returning a (param, velocity) pair per leaf, returned as is: a tree of tuples, not two
trees of the input's structure.

expect: wrong_answer
fails: none
"""
import jax


def sgd_momentum(params, grads, velocity, lr, momentum):
    def step(p, g, v):
        v = momentum * v + g
        return (p - lr * v, v)

    pairs = jax.tree.map(step, params, grads, velocity)
    return {"params": pairs, "velocity": jax.tree.map(lambda p, g, v: momentum * v + g, params, grads, velocity)}
