"""Check the "Compiles for a TPU v5e" row against a real TPU v5e.

For every Pallas problem (a ``[tpu_compile]`` table in its ``problem.toml``), this compiles and runs, on the
chip this machine has, the reference and every gallery kernel whose docstring says it fails
``compiles-for-tpu-v5e`` (and the accepted ones), at the problem's realistic size, and prints per kernel:

- ``chip``: what the real chip's own compile says (compiles / refused, with the kind and the first words of
  Mosaic's message), the planned peak, the median time of a call, and the largest difference from the
  reference's output (the reference itself against XLA's own ``jnp`` version where the problem says how);
- ``grader``: what the grader's ahead-of-time row says for the same kernel: the program traced, written as
  data, rebuilt by the verifier's allow-list and compiled for one chip of a ``v5e:2x2`` topology
  (``grader/verifier/tpu_compile.py``), exactly as a Submit does on a machine without a TPU.

The two must agree (compiles / refused; the same planned peak where both compile). Run it on a TPU v5e host:

    python benchmarks/pallas_on_tpu.py > benchmarks/results/pallas_on_tpu_v5e.txt

Without a TPU it still prints the grader's column and says the chip's could not be run.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import problems  # noqa: E402


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"k_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernels(problem, everything=False, files=()):
    """(label, path) of the reference, the gallery's refused kernels and its accepted ones (``everything``:
    every gallery kernel, its expected verdict in the label; ``files``: only those, by path)."""
    import re
    out = [("reference", problem.folder / "reference.py")]
    for sub in problem.gallery():
        text = sub.path.read_text()
        if files and str(sub.path.relative_to(ROOT)) not in files:
            continue
        if everything or files or "compiles-for-tpu-v5e" in text.split('"""')[1] or "/accepted/" in str(sub.path):
            expect = re.search(r"^expect: (\w+)", text, re.M)
            label = str(sub.path.relative_to(problem.folder / "submissions"))
            out.append((f"{label} [{expect.group(1) if expect else '?'}]", sub.path))
    return out


def arguments(problem, seed=0):
    import jax.numpy as jnp
    rng = np.random.default_rng(seed)
    dynamic, static = [], {}
    for arg, spec in zip(problem.args, problem.tpu_compile["args"]):
        if "value" in spec:
            static[arg.name] = spec["value"]
        else:
            dtype = jnp.dtype(spec.get("dtype", "float32"))
            if jnp.issubdtype(dtype, jnp.integer):  # lengths: 0 (an empty row) included
                x = rng.integers(0, 8, spec["shape"])
            else:
                x = rng.uniform(-2, 2, spec["shape"])
            dynamic.append((arg.name, jnp.asarray(x, dtype)))
    return dynamic, static


def on_chip(fn, dynamic, static, reference_out):
    import jax
    f = jax.jit(lambda *xs: fn(**dict(zip([n for n, _ in dynamic], xs)), **static))
    xs = [x for _, x in dynamic]
    try:
        compiled = f.lower(*xs).compile()
    except Exception as exc:  # noqa: BLE001 - Mosaic refused it on the chip
        from grader.verifier.tpu_compile import cut, refusal_kind
        return {"status": "refused", "kind": refusal_kind(str(exc)), "message": cut(str(exc))[:160]}
    record = {"status": "compiled"}
    try:
        record["peak_bytes"] = int(compiled.memory_analysis().peak_memory_in_bytes)
    except Exception:  # noqa: BLE001
        pass
    try:
        # NaN in the memory the result will likely be given (the allocator reuses a freed buffer of its
        # size): an output block the kernel never writes shows as NaN, not as the reference's last result
        out_shape = compiled.out_info if hasattr(compiled, "out_info") else None
        for leaf in jax.tree_util.tree_leaves(out_shape):
            jax.block_until_ready(jax.numpy.full(leaf.shape, np.nan, leaf.dtype)).delete()
        out = compiled(*xs)
        jax.block_until_ready(out)
        times = []
        for _ in range(5):
            t = time.perf_counter()
            jax.block_until_ready(compiled(*xs))
            times.append(time.perf_counter() - t)
        record["median_ms"] = round(statistics.median(times) * 1e3, 3)
        out = np.asarray(jax.tree_util.tree_leaves(out)[0], np.float32)
        if reference_out is not None:
            record["max_abs_diff_vs_reference"] = float(np.max(np.abs(out - reference_out)))
        if np.isnan(out).any():
            record["nan_entries"] = int(np.isnan(out).sum())
        record["output"] = out
    except Exception as exc:  # noqa: BLE001 - compiled, but failed to run
        record["run_error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
    return record


def grader_row(problem, fn, dynamic, static, device):
    """The grader's own path: trace, write as data, rebuild, compile for a v5e topology chip."""
    import jax
    from grader.boundary import program
    from grader.verifier.tpu_compile import compile_on
    sds = [jax.ShapeDtypeStruct(x.shape, x.dtype) for _, x in dynamic]
    names = [n for n, _ in dynamic]
    closed = jax.make_jaxpr(lambda *xs: fn(**dict(zip(names, xs)), **static))(*sds)
    data = json.loads(json.dumps(program.ProgramEncoder().program(closed)))
    return compile_on(device, data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated problem slugs")
    parser.add_argument("--no-grader", action="store_true", help="skip the grader's ahead-of-time column")
    parser.add_argument("--all", action="store_true", help="every gallery kernel (wrong answers and cheats too)")
    parser.add_argument("--files", default="", help="comma-separated gallery files (paths from the repository)")
    args = parser.parse_args()
    import jax
    print(f"jax {jax.__version__}; devices: {[d.device_kind for d in jax.devices()]}")
    chip = jax.devices()[0].platform == "tpu"
    device = None
    if not args.no_grader:
        try:
            from grader.verifier.tpu_compile import _device
            device = _device()
        except Exception as exc:  # noqa: BLE001
            print(f"grader column unavailable: {type(exc).__name__}: {str(exc)[:200]}")
    wanted = {s for s in args.only.split(",") if s}
    for problem in problems.registry().values():
        if not problem.tpu_compile or (wanted and problem.slug not in wanted):
            continue
        dynamic, static = arguments(problem)
        print(f"\n== {problem.slug}: {', '.join(f'{n}{tuple(x.shape)} {x.dtype}' for n, x in dynamic)} {static}")
        reference_out = None
        files = {f for f in args.files.split(",") if f}
        listed = kernels(problem, args.all, files)
        if files and len(listed) == 1:
            continue
        for label, path in listed:
            fn = getattr(load(path), problem.entry)
            line = f"{label:55s}"
            if chip:
                rec = on_chip(fn, dynamic, static, reference_out)
                if label == "reference" and "output" in rec:
                    reference_out = rec["output"]
                rec.pop("output", None)
                line += " chip: " + json.dumps(rec)
            else:
                line += " chip: not run (no TPU here)"
            if device is not None:
                try:
                    rec = grader_row(problem, fn, dynamic, static, device)
                    rec.pop("message", None) if rec.get("status") == "compiled" else None
                    if "message" in rec:
                        rec["message"] = rec["message"][:160]
                    line += " | grader: " + json.dumps(rec)
                except Exception as exc:  # noqa: BLE001
                    line += f" | grader: error {type(exc).__name__}: {str(exc)[:160]}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
