"""The `jnp` version: the same layer norm written with `jnp`, fused as XLA sees fit (the Cost tab's comparison;
what `benchmarks/pallas_layer_norm_vs_xla.py` timed on the chip)."""
import jax

EPS = 1e-5


def layer_norm(x, gamma, beta, bm):
    mean = x.mean(-1, keepdims=True)
    centered = x - mean
    return centered * jax.lax.rsqrt((centered * centered).mean(-1, keepdims=True) + EPS) * gamma + beta
