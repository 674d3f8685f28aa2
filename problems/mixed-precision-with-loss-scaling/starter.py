import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    """One SGD step with a float16 forward pass, loss scaling and a
    skipped step on overflow.

    params: dict of float32 arrays w1 (D, H), b1 (H,), w2 (H, K), b2
    (K,); x: (B, D); y: (B, K);
    loss_scale, lr: Python floats.
    Returns {"params": {same keys, float32}, "loss": f32[], "applied":
    bool[]}.
    """
    # TODO: cast to float16 inside the loss, multiply the loss by
    # loss_scale inside jax.grad,
    # divide the gradients by it, and keep the old params where any
    # gradient is not finite.
    raise NotImplementedError
