"""The Cost tab's time from click to figures (issue 32), for each problem with an insight, cold and warm.

The page's own path: ``PoolRunner(pool).cost(problem, code, target=...)`` (what the Measure cost button
starts in the background) on a pool of grading workers that are ready when the click arrives.

* cold: the first measurement of a fresh server (a new pool, nothing kept in memory; the shipped plans of
  ``problems/<slug>/plans/`` are read, so only the learner's programs compile);
* warm: a second measurement on the same server of different code (the reference with a comment: its
  programs compile again, the worker has libtpu loaded, the trusted figures are kept).

Prints seconds per problem with the load average (the machine is shared) and writes
``results/cost_click_<target>.txt``.

    python benchmarks/cost_click.py [SLUG ...] [--target tpu-v5e] [--small]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from grader.grading.runners import PoolRunner  # noqa: E402
from grader.grading.workers import worker_pool  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def click(pool, problem, code: str, target: str, small: bool) -> tuple[float, object]:
    started = time.monotonic()
    report = PoolRunner(pool).cost(problem, code, small=small, target=target)
    return time.monotonic() - started, report


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("--target", default="tpu-v5e")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    slugs = args.slugs or [s for s, p in problems.registry().items() if p.insight is not None]
    lines = [f"# python benchmarks/cost_click.py {' '.join(sys.argv[1:])}".rstrip(),
             f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores; seconds from the click to the figures",
             f"{'problem':42} {'cold':>7} {'warm':>7} {'shipped':>8} {'learner programs':>17} {'load':>6}"]
    print("\n".join(lines), flush=True)
    for slug in slugs:
        problem = problems.get(slug)
        pool = worker_pool(1)  # a fresh server's pool: one worker, ready before the click
        try:
            pool.wait_ready(1, timeout=120)
            cold, report = click(pool, problem, problem.reference, args.target, args.small)
            warm, again = click(pool, problem, problem.reference + "\n# edited\n", args.target, args.small)
        finally:
            pool.shutdown()
        jobs = {j["job"]: j for j in again.jobs}
        shipped = any(j.get("shipped") for j in report.jobs)
        ok = "" if report.ok and again.ok else f"  NOT OK: {report.error or again.error}"[:200]
        line = (f"{slug:42} {cold:7.1f} {warm:7.1f} {'yes' if shipped else 'no':>8} "
                f"{jobs.get('learner', {}).get('programs', 0):>17} {os.getloadavg()[0]:6.1f}{ok}")
        lines.append(line)
        print(line, flush=True)
    RESULTS.mkdir(exist_ok=True)
    suffix = "_small" if args.small else ""
    path = RESULTS / f"cost_click_{args.target}{suffix}.txt"
    # a run over some problems replaces their rows and keeps the others' (each row says its own load)
    kept = [line for line in (path.read_text().splitlines() if path.exists() else [])
            if line and not line.startswith(("#", "problem ")) and line.split()[0] not in slugs]
    rows = sorted(kept + lines[3:], key=lambda line: line.split()[0])
    path.write_text("\n".join(lines[:3] + rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
