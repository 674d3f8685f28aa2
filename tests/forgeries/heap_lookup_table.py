# problem: exponential-moving-average-with-scan
# expect: wrong_answer
# mode: submit
# what: at import, walks `gc.get_objects()` for the grader's cases, computes each one's right answer with a
# NumPy loop, and traces a wrong scan (a running sum) plus a lookup table keyed on the scan's own output: pure
# JAX primitives, nothing forged. With every case's inputs in the child's heap (before issue 29) this was
# accepted on all 21 cases; now the child holds only the visible examples' values, so the table misses every
# hidden case and the rebuilt wrong scan is what the verifier runs on them.
import gc

import jax
import jax.numpy as jnp
import numpy as np


def _right(x, init, decay):
    average, rows = np.asarray(init, np.float32), []
    for row in np.asarray(x, np.float32):
        average = np.float32(decay) * average + np.float32(1.0 - decay) * row
        rows.append(average)
    return np.stack(rows), average


TABLE = []
for obj in gc.get_objects():
    if isinstance(obj, dict) and isinstance(obj.get("args"), dict) and "name" in obj:
        a = obj["args"]
        if isinstance(a.get("x"), list) and isinstance(a.get("init"), list) and isinstance(a.get("decay"), (int, float)):
            x = np.asarray(a["x"], np.float32)
            key = float(np.sum(x) + 3.1 * np.sum(np.asarray(a["init"], np.float32)) + 7.7 * a["decay"])
            TABLE.append((x.shape, key) + _right(a["x"], a["init"], a["decay"]))


def ema(x, init, decay):
    def step(total, row):
        total = total + row  # wrong: a running sum, not a moving average
        return total, total

    final, sums = jax.lax.scan(step, init, x)
    key = jnp.sum(final) + 2.1 * jnp.sum(init) + 7.7 * decay  # sum(x) + 3.1 * sum(init) + 7.7 * decay
    averages, last = sums, final
    for shape, k, rows, end in TABLE:
        if shape == x.shape:
            hit = jnp.abs(key - k) < 1e-3
            averages = jnp.where(hit, rows, averages)
            last = jnp.where(hit, end, last)
    return {"averages": averages, "final": last}
