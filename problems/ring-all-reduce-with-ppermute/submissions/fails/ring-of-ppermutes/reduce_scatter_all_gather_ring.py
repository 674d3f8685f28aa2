"""The bandwidth-optimal ring: each row cut into n chunks, n - 1 reduce-scatter steps then n - 1 all-gather
steps, every ppermute moving one chunk. Right numbers, but 2(n - 1) steps, and the problem asks for the simple
n - 1-step ring.

expect: requirements_not_met
fails: ring-of-ppermutes
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(np.array(jax.devices()[:n]), ("ring",))
    ring = [(i, (i + 1) % n) for i in range(n)]

    def body(block):
        d = block.shape[1]
        c = -(-d // n)                                         # chunk size (padded)
        chunks = jnp.pad(block[0], (0, c * n - d)).reshape(n, c)
        me = jax.lax.axis_index("ring")
        # reduce-scatter: at step s, send chunk (me - s) and add the incoming one into chunk (me - s - 1)
        for s in range(n - 1):
            send = jax.lax.dynamic_index_in_dim(chunks, (me - s) % n, keepdims=False)
            got = jax.lax.ppermute(send, "ring", ring)
            k = (me - s - 1) % n
            chunks = jax.lax.dynamic_update_index_in_dim(chunks, chunks[k] + got, k, axis=0)
        # now chunk (me + 1) % n is complete; all-gather it around the ring
        for s in range(n - 1):
            send = jax.lax.dynamic_index_in_dim(chunks, (me + 1 - s) % n, keepdims=False)
            got = jax.lax.ppermute(send, "ring", ring)
            chunks = jax.lax.dynamic_update_index_in_dim(chunks, got, (me - s) % n, axis=0)
        return chunks.reshape(-1)[:d][None, :]

    return jax.shard_map(body, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(x)
