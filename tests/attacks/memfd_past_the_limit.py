# problem: gradient-accumulation-with-scan
# expect: memory_limit
# says: shared memory is not available in the sandbox
# what: writes 2.4 GiB into a memfd without mapping it: in no process's RSS, not under RLIMIT_AS
import jax
import jax.numpy as jnp

import os
fd = os.memfd_create("hoard")
chunk = b"x" * (64 << 20)
for _ in range(39):  # 2.4 GiB, past the 2 GiB memory limit
    os.write(fd, chunk)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
