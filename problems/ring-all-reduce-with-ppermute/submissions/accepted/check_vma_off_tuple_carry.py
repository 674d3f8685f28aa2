"""`check_vma=False`, the mesh built with `jax.sharding.Mesh(jax.devices()[:n], ...)` from a list, and a
Python loop whose carry is a dict (as flax-style code keeps state).

expect: accepted
fails: none
"""
import jax
from jax.sharding import Mesh, PartitionSpec as P


def ring_all_reduce(x):
    n = x.shape[0]
    mesh = Mesh(jax.devices()[:n], axis_names=("data",))
    perm = tuple((src, (src + 1) % n) for src in range(n))

    def shard_fn(local):
        state = {"sum": local, "send": local}
        for _ in range(n - 1):
            received = jax.lax.ppermute(state["send"], "data", perm)
            state = {"sum": state["sum"] + received, "send": received}
        return state["sum"]

    return jax.shard_map(shard_fn, mesh=mesh, in_specs=(P("data", None),), out_specs=P("data", None),
                         check_vma=False)(x)
