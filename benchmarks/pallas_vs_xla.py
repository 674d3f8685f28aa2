"""A Pallas problem's reference kernel against its `jnp` version (``baseline.py``: what XLA fuses on its own),
timed on a real TPU v5e at the problem's realistic size (``[tpu_compile]``), with each compiled program's
planned peak and the largest difference between their outputs (median of 10 calls, after one to warm up).

Float arguments are uniform in [-2, 2]; integer arguments (lengths) uniform in [0, n], n the last dimension
of the first float argument, so that a ragged kernel skips a realistic share of its blocks.

    python benchmarks/pallas_vs_xla.py SLUG [SLUG ...]    # on a TPU v5e host
"""
from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import problems  # noqa: E402


def _entry(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"m_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def _arguments(problem, rng):
    import jax.numpy as jnp
    dynamic, static, width = [], {}, None
    for arg, spec in zip(problem.args, problem.tpu_compile["args"]):
        if "value" in spec:
            static[arg.name] = spec["value"]
            continue
        dtype = jnp.dtype(spec.get("dtype", "float32"))
        if jnp.issubdtype(dtype, jnp.integer):
            dynamic.append((arg.name, dtype, spec["shape"]))
        else:
            width = width or spec["shape"][-1]
            dynamic.append((arg.name, dtype, spec["shape"]))
    values = [(n, jnp.asarray(rng.integers(0, width + 1, shape) if jnp.issubdtype(d, jnp.integer)
                              else rng.uniform(-2, 2, shape), d)) for n, d, shape in dynamic]
    return values, static


def _time(fn, values, static):
    import jax
    names = [n for n, _ in values]
    xs = [x for _, x in values]
    compiled = jax.jit(lambda *a: fn(**dict(zip(names, a)), **static)).lower(*xs).compile()
    out = compiled(*xs)
    jax.block_until_ready(out)
    times = []
    for _ in range(10):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*xs))
        times.append(time.perf_counter() - t)
    return statistics.median(times), int(compiled.memory_analysis().peak_memory_in_bytes), np.asarray(out)


def main(slugs: list[str]) -> int:
    import jax
    print(f"jax {jax.__version__}; devices: {[d.device_kind for d in jax.devices()]}")
    for slug in slugs:
        problem = problems.get(slug)
        values, static = _arguments(problem, np.random.default_rng(0))
        print(f"\n== {slug}: {', '.join(f'{n}{tuple(x.shape)} {x.dtype}' for n, x in values)} {static}")
        rows = {}
        for label, path in (("kernel (reference.py)", problem.folder / "reference.py"),
                            ("jnp (baseline.py)", problem.folder / "baseline.py")):
            try:
                rows[label] = _time(_entry(path, problem.entry), values, static)
                seconds, peak, _ = rows[label]
                print(f"{label:24s} {seconds * 1e3:8.3f} ms   planned peak {peak:,} bytes")
            except Exception as exc:  # noqa: BLE001 - report and go on
                print(f"{label:24s} failed: {type(exc).__name__}: {str(exc)[:200]}")
        if len(rows) == 2:
            (_, _, a), (_, _, b) = rows.values()
            print(f"largest difference between the two outputs: {float(np.max(np.abs(a - b))):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
