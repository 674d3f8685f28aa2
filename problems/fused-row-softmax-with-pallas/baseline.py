"""The `jnp` version: XLA's own softmax over each row, fused as XLA sees fit (the Cost tab's comparison)."""
import jax


def row_softmax(x, bm):
    return jax.nn.softmax(x, axis=-1)
