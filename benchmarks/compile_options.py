"""Do XLA's CPU compile options make a one-shot worker's first run faster, and keep it correct?

Each measurement is a fresh process (as a pooled worker is): import JAX with the option under test, then
time ``child.run_job`` on a problem's visible examples, first run only. CPU seconds are reported beside
wall seconds because CPU time is far less sensitive to other load on the machine. Every configuration is
also graded on all cases (examples and hidden) against the stored expected outputs, and its traced
programs (what the requirement checks read) are compared with the default configuration's.

    python benchmarks/compile_options.py [--reps 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFIGS = {
    "default XLA": {"XLA_FLAGS": ""},
    "opt level 0": {"XLA_FLAGS": "--xla_backend_optimization_level=0"},
    "opt 0 + no expensive LLVM passes": {
        "XLA_FLAGS": "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"},
    "single-threaded eigen": {
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"},
    "eager eval_jaxpr (no jit)": {"XLA_FLAGS": "", "MODE": "eval"},
    "jax.disable_jit while running": {"XLA_FLAGS": "", "MODE": "nojit"},
}

PROBE = r"""
import json, os, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/grader/learner"]
import child, problems
from grader.grading.grade import build_job, _interpret
from grader.sandbox import Limits, RunOutcome
t = child.start_jax()
import jax
mode = os.environ.get("MODE", "jit")
if mode == "eval":
    t["jit"] = lambda f: f
elif mode == "nojit":
    def run_without_jit(f):
        def g(*a):
            with jax.disable_jit():
                return f(*a)
        return g
    t["jit"] = run_without_jit
p = problems.get(sys.argv[2])
examples_only = sys.argv[3] == "run"
job = build_job(p, p.reference, examples_only)
w0, c0 = time.perf_counter(), time.process_time()
result = child.run_job(t, job)  # the reference is trusted: no tamper checks between traces
wall, cpu = time.perf_counter() - w0, time.process_time() - c0
report = _interpret(p, p.cases(examples_only), RunOutcome(result=result), Limits(), "ref")
errs = [leaf.max_abs_err or 0.0 for c in report.cases for leaf in c.leaves]
import hashlib
traces = hashlib.sha256(json.dumps(result["traces"], sort_keys=True).encode()).hexdigest()[:12]
print(json.dumps({"wall": wall, "cpu": cpu, "verdict": report.verdict.value, "max_err": max(errs or [0]),
                  "traces": traces}))
"""


def probe(config: dict[str, str], slug: str, kind: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "MODE")}
    env.update({k: v for k, v in config.items() if v})
    env["JAX_PLATFORMS"] = "cpu"
    env["GRADER_XLA_FLAGS"] = config.get("XLA_FLAGS", "")  # child.start_jax() uses this when set
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), slug, kind], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--problems", nargs="*", default=["gradient-accumulation-with-scan", "rematerialized-mlp-block"])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.reps):  # interleaved, so drifting load hits every configuration alike
        for name, config in CONFIGS.items():
            for slug in args.problems:
                runs.setdefault((name, slug), []).append(probe(config, slug, "run"))
    checks = {(name, slug): probe(config, slug, "submit") for name, config in CONFIGS.items() for slug in args.problems}
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    base = {slug: statistics.median(r["cpu"] for r in runs[("default XLA", slug)]) for slug in args.problems}
    print(f"\n{'configuration':36s} {'problem':16s} {'wall p50':>9s} {'cpu p50':>8s} {'cpu/default':>11s}  all cases"
          "; jaxpr as default")
    for (name, slug), rs in runs.items():
        cpu = statistics.median(r["cpu"] for r in rs)
        wall = statistics.median(r["wall"] for r in rs)
        chk = checks[(name, slug)]
        print(f"{name:36s} {slug[:16]:16s} {wall:8.3f}s {cpu:7.3f}s {cpu / base[slug]:10.2f}x  "
              f"{chk['verdict']} (max abs err {chk['max_err']:.1e}); "
              f"{'same' if chk['traces'] == checks[('default XLA', slug)]['traces'] else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
