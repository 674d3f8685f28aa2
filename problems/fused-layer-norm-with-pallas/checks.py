"""Requirement checks for the fused layer norm: the ``pallas_call``'s grid and blocks as data, its kernel's
equations, and the TPU v5e compile record the trusted side made (``grader.toolkit.tpu_compiles``).

``pallas-grid`` is the toolkit's kernel over blocks of whole rows (``row_block_grid``) with `gamma` and
`beta` handed whole to every step; the call must carry the answer and `x`, `gamma` and `beta` reach the
output only through it, so a scale and shift applied outside fails it. ``fused-in-kernel``
(``fused_kernel``) asks for the sums (mean and variance) and the square root among the one kernel's
equations, and nothing outside it computing on `x` or on what is made from it (reshaping or stacking `gamma` and `beta` is not a pass over the data).
"""
from grader.toolkit import CheckResult, Trace, fused_kernel, row_block_grid, tpu_compiles

STEPS = [("the mean and the variance", {"reduce_sum"}, "`jnp.mean(x, axis=-1, keepdims=True)`"),
         ("the normalisation", {"rsqrt", "sqrt"}, "`jax.lax.rsqrt(var + EPS)`")]


def pallas_grid(trace: Trace) -> CheckResult:
    return row_block_grid(trace, "x", whole=("gamma", "beta"))


def fused_in_kernel(trace: Trace) -> CheckResult:
    return fused_kernel(trace, "layer norm", STEPS, data="x")


def compiles_for_tpu(trace: Trace) -> CheckResult:
    return tpu_compiles(trace)


CHECKS = {"pallas-grid": pallas_grid, "fused-in-kernel": fused_in_kernel, "compiles-for-tpu-v5e": compiles_for_tpu}
