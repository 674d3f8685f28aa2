"""Requirement checks for the fused row softmax: the ``pallas_call``'s grid and blocks as data, its kernel's
equations, and the TPU v5e compile record the trusted side made (``grader.toolkit.tpu_compiles``).

``pallas-grid`` is the toolkit's kernel over blocks of whole rows (``row_block_grid``): its index maps
evaluated at every step, and the call must carry the answer, so a decorative kernel beside `jax.nn.softmax`,
or a kernel whose output is thrown away, fails it. ``fused-in-kernel`` (``fused_kernel``) asks for the row
maximum, the exponentials and their sum among the one kernel's equations (its loops' and nested calls' too:
`jax.nn.softmax` or a `fori_loop` over rows inside the kernel counts), and nothing outside it computing on `x` or on what is made from it (one more pass over the data in HBM).
"""
from grader.toolkit import CheckResult, Trace, fused_kernel, row_block_grid, tpu_compiles

STEPS = [("the row maximum", {"reduce_max"}, "`jnp.max(x, axis=-1, keepdims=True)`"),
         ("the exponentials", {"exp", "exp2"}, "`jnp.exp(x - m)`"),
         ("their sum", {"reduce_sum"}, "`jnp.sum(e, axis=-1, keepdims=True)`")]


def pallas_grid(trace: Trace) -> CheckResult:
    return row_block_grid(trace, "x")


def fused_in_kernel(trace: Trace) -> CheckResult:
    return fused_kernel(trace, "softmax", STEPS, data="x")


def compiles_for_tpu(trace: Trace) -> CheckResult:
    return tpu_compiles(trace)


CHECKS = {"pallas-grid": pallas_grid, "fused-in-kernel": fused_in_kernel, "compiles-for-tpu-v5e": compiles_for_tpu}
