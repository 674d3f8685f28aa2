# problem: gradient-accumulation-with-scan
# expect: output_limit runtime_error
# what: files in the scratch folder that no folder shows: written, mapped and removed (the mapping keeps them), and O_TMPFILE files kept open, each under the file-size limit, far past the scratch cap
import jax
import jax.numpy as jnp

import mmap
import os
import time
chunk = b"x" * (8 << 20)
kept = []
for i in range(48):  # 48 x 15 MiB: 720 MiB, past the 64 MiB scratch cap (a tmpfs of the run's memory)
    try:
        fd = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600) if i % 2 else None
    except OSError:
        fd = None
    if fd is None:
        fd = os.open("f%d" % i, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        os.write(fd, chunk)
        os.write(fd, chunk[: 7 << 20])
    except OSError:
        break  # the tmpfs is full: hold what there is
    if i % 2:
        kept.append(fd)
    else:
        kept.append(mmap.mmap(fd, 0))
        os.close(fd)
    if os.path.exists("f%d" % i):
        os.unlink("f%d" % i)
time.sleep(30)  # hold it past the watch


def grad_accumulation(params, x, y, num_microbatches):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
