import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def megatron_mlp(x, w1, b1, w2, b2):
    """The MLP block tanh(x @ w1 + b1) @ w2 + b2, tensor-parallel
    over 8 devices (Megatron-LM).

    x: (B, D), w1: (D, H), b1: (H,), w2: (H, D), b2: (D,), float32;
    H a multiple of 8.
    Returns (B, D) float32, whole on every device.
    """
    mesh = Mesh(np.array(jax.devices()[:8]), ("model",))
    # TODO: in jax.shard_map over mesh, split w1 and b1 by columns
    # (P(None, "model"), P("model")) and w2 by rows (P("model", None));
    # keep x and b2 whole (P()). Each device computes its columns of
    # the hidden layer and its share of the output; one
    # jax.lax.psum over "model" adds the shares.
    raise NotImplementedError
