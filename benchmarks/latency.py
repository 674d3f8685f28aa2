"""Run latency: grading one submission on the visible examples, the app's path, three ways.

* floor: the same cases traced, compiled and run by ``child.run_job`` inside this one warm process (no
  child process at all, no counterfactual probes), then compared and checked by ``grade``: what a Run cannot
  beat; measured for every problem;
* warm: ``grade(run=pool.run)`` on a pool whose workers are ready when the run arrives;
* verified (with ``--verifier``): the same warm path through the verifier (``JAXPLAY_VERIFIER``, issue 23):
  the child only traces, a warm verifier process rebuilds, runs and probes the programs; side by side with
  warm, interleaved;
* cold: ``grade(run=run_job)``, a fresh process per run (JAX imported on the learner's clock), for the two
  seed problems;
* batch: ``python -m grader check SLUG FILE... --examples-only`` with 1 and with N files; the cost of
  each extra file is ``(T(N) - T(1)) / (N - 1)``.

Figures are printed as seconds and as ratios to the floor's p50, with the load average, because the
machine is shared.

    python benchmarks/latency.py [--reps 12] [--batch 6]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("JAX_PLATFORMS", "cpu")  # the floor computes where the child does (with the TPU extra too)
sys.path[:0] = [str(ROOT), str(ROOT / "grader" / "learner")]

import child  # noqa: E402  (grader/learner/child.py, imported as a module for the in-process floor)
import problems  # noqa: E402
from grader.grading.grade import grade  # noqa: E402
from grader.records import Verdict  # noqa: E402
from grader.sandbox import Limits, RunOutcome  # noqa: E402
from grader.verifier import service as verifier  # noqa: E402
from grader.grading.workers import run_job, worker_pool  # noqa: E402

SEEDS = ["gradient-accumulation-with-scan", "rematerialized-mlp-block"]
"""The problems the cold path and the batch are measured on (every problem gets floor and warm)."""


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def timed_grade(problem: problems.Problem, run) -> float:
    t0 = time.perf_counter()
    report = grade(problem, problem.reference, examples_only=True, run=run)
    elapsed = time.perf_counter() - t0
    assert report.verdict is Verdict.ACCEPTED, report.message
    return elapsed


def batch_seconds(slug: str, files: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "check", slug, *files, "--examples-only", "--json"],
                   cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=12, help="runs per problem and mode")
    parser.add_argument("--batch", type=int, default=6, help="files in the large batch")
    parser.add_argument("--only", default="", help="comma-separated slugs (default: every problem)")
    parser.add_argument("--verifier", action="store_true", help="also measure the warm path through the verifier")
    parser.add_argument("--no-batch", action="store_true", help="skip the batch CLI figures")
    args = parser.parse_args()
    load0 = os.getloadavg()

    tools = child.start_jax()  # the floor's warm process is this one (with the child's XLA options)

    def in_process(job: dict, limits: Limits) -> RunOutcome:
        # trusted code: no tamper checks between traces, and no counterfactual probes (the grader's own
        # work on top of tracing, compiling and running, which the warm path pays for)
        return RunOutcome(result=child.run_job(tools, dict(job, probe_cases=[])))

    slugs = list(problems.registry()) if not args.only else args.only.split(",")
    times: dict[str, list[float]] = {"floor": [], "warm": [], "cold": [], "verified": []}
    if args.verifier:
        verifier.warm_up()
    per: dict[tuple[str, str], list[float]] = {}
    with worker_pool() as pool:  # the app's defaults (JAXPLAY_POOL_SIZE / _WARM)
        for _ in range(args.reps):  # interleaved, so drifting load hits every mode alike
            for slug in slugs:
                problem = problems.get(slug)
                modes = [("floor", in_process), ("warm", pool.run)] + ([("cold", run_job)] if slug in SEEDS else [])
                modes += [("verified", pool.run)] if args.verifier else []
                for mode, run in modes:
                    pool.wait_ready()  # no refill competes for the CPU during any measurement
                    verifier.ENABLED = mode == "verified"
                    seconds = timed_grade(problem, run)
                    verifier.ENABLED = False
                    per.setdefault((slug, mode), []).append(seconds)
                    if slug in SEEDS:
                        times[mode].append(seconds)

    batch: dict[int, list[float]] = {1: [], args.batch: []}
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i in range(args.batch):
            path = Path(tmp) / f"s{i}.py"
            path.write_text(problems.get(SEEDS[0]).reference)
            files.append(str(path))
        for _ in range(0 if args.no_batch else max(3, args.reps // 4)):
            batch[1].append(batch_seconds(SEEDS[0], files[:1]))
            batch[args.batch].append(batch_seconds(SEEDS[0], files))
    load1 = os.getloadavg()

    if not times["floor"]:  # --only without a seed problem: per-problem figures only
        times = {mode: [x for (_, m), xs in per.items() if m == mode for x in xs] for mode in ("floor", "warm", "verified")}
        times["cold"] = []
    floor = statistics.median(times["floor"])
    print(f"load average {load0[0]:.1f} before, {load1[0]:.1f} after, on {os.cpu_count()} CPUs; "
          f"{args.reps} runs per problem and mode\n")
    print("| problem | floor p50 | warm p50 | warm / floor |" + (" verified p50 | verified / warm |" if args.verifier else ""))
    print("|---|---|---|---|" + ("---|---|" if args.verifier else ""))
    for slug in slugs:
        f, w = statistics.median(per[(slug, "floor")]), statistics.median(per[(slug, "warm")])
        v = statistics.median(per[(slug, "verified")]) if args.verifier else None
        print(f"| {slug} | {f:.2f} s | {w:.2f} s | {w / f:.2f} |" + (f" {v:.2f} s | {v / w:.2f} |" if v else ""))
    print(f"\nThe seeds ({', '.join(SEEDS)}) together:\n")
    print("| path | p50 | p95 | p50 / floor p50 | p95 / floor p50 |")
    print("|---|---|---|---|---|")
    for mode in ("floor", "warm", "cold", "verified"):
        if not times[mode]:
            continue
        p50, p95 = percentile(times[mode], 0.5), percentile(times[mode], 0.95)
        print(f"| {mode} | {p50:.2f} s | {p95:.2f} s | {p50 / floor:.2f} | {p95 / floor:.2f} |")
    if batch[1]:
        one, many = statistics.median(batch[1]), statistics.median(batch[args.batch])
        extra = (many - one) / (args.batch - 1)
        print(f"\nbatch CLI (examples only): 1 file {one:.2f} s, {args.batch} files {many:.2f} s; "
              f"each extra file {extra:.2f} s = {extra / floor:.2f} x floor p50 (target <= 1)")
    print(f"warm p50 = {percentile(times['warm'], 0.5) / floor:.2f} x floor p50 (target <= 1.5)")
    if times["verified"]:
        ratio = percentile(times["verified"], 0.5) / percentile(times["warm"], 0.5)
        print(f"verified p50 = {ratio:.2f} x warm p50 (target <= 1.15)")


if __name__ == "__main__":
    main()
