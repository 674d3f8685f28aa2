"""MaxText's logical axis rules on a 2-D mesh ('data', 'tensor') with a data axis of 1: 'mlp' maps to the
tensor axis, 'embed' to nothing; `shard_map` with `check_vma=False` and the psum over 'tensor'.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


RULES = {"batch": "data", "embed": None, "mlp": "tensor"}


def spec(*logical):
    return P(*(RULES[a] if a else None for a in logical))


def megatron_mlp(x, w1, b1, w2, b2):
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(1, 8), ("data", "tensor"))

    def block(x, w1, b1, w2, b2):
        hidden = jnp.tanh(jnp.dot(x, w1) + b1)
        out = jax.lax.psum(jnp.dot(hidden, w2), "tensor")
        return out + b2

    return jax.shard_map(block, mesh=mesh,
                         in_specs=(spec("batch", "embed"), spec("embed", "mlp"), spec("mlp"), spec("mlp", "embed"),
                                   spec("embed")),
                         out_specs=spec("batch", "embed"), check_vma=False)(x, w1, b1, w2, b2)
