"""Under `jax.jit`: `x` placed with `jax.device_put` on a `NamedSharding`, reshaped to (n, 1, d) blocks, a
ring written as a helper with the permutation computed by `np.roll`, and the result reshaped back.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def _ring_step(block, axis, n):
    sources = np.arange(n)
    return jax.lax.ppermute(block, axis, list(zip(sources.tolist(), np.roll(sources, 1).tolist())))


@jax.jit
def ring_all_reduce(x):
    n, d = x.shape
    mesh = Mesh(np.array(jax.devices()[:n]), ("model",))
    blocks = jax.device_put(x.reshape(n, 1, d), NamedSharding(mesh, P("model")))

    def body(b):
        acc, cur = b, b
        for _ in range(n - 1):
            cur = _ring_step(cur, "model", n)
            acc = jnp.add(acc, cur)
        return acc

    out = jax.shard_map(body, mesh=mesh, in_specs=P("model"), out_specs=P("model"))(blocks)
    return out.reshape(n, d)
