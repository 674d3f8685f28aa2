"""flax style: a module object with `apply`, `jax.grad(..., has_aux=True)` returning the logits too, and
`jax.jvp(..., has_aux=True)` dropping them.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


class LogisticRegression:
    def apply(self, variables, x):
        return x @ variables["params"]["kernel"]


def hvp(w, x, y, v):
    model = LogisticRegression()

    def loss(variables):
        logits = model.apply(variables, x)
        return jnp.mean(jax.nn.softplus(logits) - y * logits), logits

    grad_fn = jax.grad(loss, has_aux=True)
    variables = {"params": {"kernel": w}}
    tangents = {"params": {"kernel": v}}
    grads, product, _ = jax.jvp(grad_fn, (variables,), (tangents,), has_aux=True)
    return {"grad": grads["params"]["kernel"], "hvp": product["params"]["kernel"]}
