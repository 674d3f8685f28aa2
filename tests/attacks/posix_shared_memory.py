# problem: gradient-accumulation-with-scan
# expect: memory_limit
# says: shared memory is not available in the sandbox
# what: POSIX shared memory (multiprocessing.shared_memory, which lives in /dev/shm), 2.4 GiB
import jax
import jax.numpy as jnp

from multiprocessing import shared_memory
block = shared_memory.SharedMemory(create=True, size=39 * (64 << 20))
block.buf[:] = b"x" * len(block.buf)


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
