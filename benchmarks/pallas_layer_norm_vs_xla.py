"""Fused layer norm on a real TPU v5e: XLA's own jnp layer norm against the reference kernel at several block
heights (x of 4096 x 2048 float32, median of 10 calls; GB/s counts one read and one write of x). Run on a v5e host
after ``benchmarks/pallas_on_tpu.py --only fused-layer-norm-with-pallas``."""
import statistics, time, importlib.util, sys
import jax, jax.numpy as jnp, numpy as np
sys.path.insert(0, ".")
spec = importlib.util.spec_from_file_location("ref", "problems/fused-layer-norm-with-pallas/reference.py")
ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
rng = np.random.default_rng(0)
x = jnp.asarray(rng.uniform(-2, 2, (4096, 2048)), jnp.float32)
g = jnp.asarray(rng.uniform(0.5, 2, (2048,)), jnp.float32)
b = jnp.asarray(rng.uniform(-1, 1, (2048,)), jnp.float32)
def xla(x, g, b):
    mean = x.mean(-1, keepdims=True); c = x - mean
    return c * jax.lax.rsqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g + b
def bench(f, *a):
    c = jax.jit(f).lower(*a).compile()
    out = c(*a); jax.block_until_ready(out)
    ts = []
    for _ in range(10):
        t = time.perf_counter(); jax.block_until_ready(c(*a)); ts.append(time.perf_counter() - t)
    return c, out, statistics.median(ts)
c, want, t = bench(xla, x, g, b)
print(f"xla jnp layer norm ms {t*1e3:.3f} GB/s {2*x.nbytes/t/1e9:.0f} peak {c.memory_analysis().peak_memory_in_bytes}")
for bm in (8, 64, 256, 512, 1024):
    try:
        c, out, t = bench(lambda x, g, b: ref.layer_norm(x, g, b, bm), x, g, b)
        print(f"kernel bm {bm} ms {t*1e3:.3f} GB/s {2*x.nbytes/t/1e9:.0f} peak {c.memory_analysis().peak_memory_in_bytes} maxdiff {float(jnp.max(jnp.abs(out - want))):.3g}")
    except Exception as e:
        print(f"kernel bm {bm} refused {str(e)[:200]}")
