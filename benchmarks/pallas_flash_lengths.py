"""Flash attention forward on a real TPU v5e as the sequence grows: the reference kernel (blocks of 128 and 512)
against XLA's dense attention (baseline.py), Lq = Lk = L, D = 128, float32; median of 10 calls and the planned peak.

    python benchmarks/pallas_flash_lengths.py    # on a TPU v5e host
"""
import sys; sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import numpy as np, jax.numpy as jnp, problems, pallas_vs_xla as b
p = problems.get("flash-attention-forward-with-pallas")
ref = b._entry(p.folder / "reference.py", p.entry); base = b._entry(p.folder / "baseline.py", p.entry)
rng = np.random.default_rng(0)
for L in (2048, 8192, 16384, 32768):
    vals = [(n, jnp.asarray(rng.uniform(-2, 2, (L, 128)), jnp.float32)) for n in "qkv"]
    for blk in (128, 512):
        try:
            t, peak, _ = b._time(ref, vals, {"bq": blk, "bk": blk}); print(f"L {L} kernel b{blk} {t*1e3:.3f} ms peak {peak:,}")
        except Exception as e: print(f"L {L} kernel b{blk} failed {str(e)[:150]}")
    try:
        t, peak, _ = b._time(base, vals, {"bq": 128, "bk": 128}); print(f"L {L} jnp dense {t*1e3:.3f} ms peak {peak:,}")
    except Exception as e: print(f"L {L} jnp dense failed {str(e)[:150]}")
