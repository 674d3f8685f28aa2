"""The numbers are right, but the new trees are rebuilt by a hand-written tree walk that turns every list into
a tuple: the statement promises trees of the same structure as `params`, and a tuple is not the list it was
(the hidden cases with lists of layers catch it; the message names the path and both types).

expect: wrong_answer
fails: none
"""
import jax.numpy as jnp


def _map(f, *trees):
    head = trees[0]
    if isinstance(head, dict):
        return {k: _map(f, *(t[k] for t in trees)) for k in head}
    if isinstance(head, (list, tuple)):
        return tuple(_map(f, *items) for items in zip(*trees))
    return f(*trees)


def adamw_update(params, grads, mu, nu, count, lr, b1, b2, eps, weight_decay):
    mu = _map(lambda g, m: (1 - b1) * g + b1 * m, grads, mu)
    nu = _map(lambda g, v: (1 - b2) * g * g + b2 * v, grads, nu)
    t = count + 1
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    new = _map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p), params, mu, nu)
    return {"params": new, "mu": mu, "nu": nu, "count": t}
