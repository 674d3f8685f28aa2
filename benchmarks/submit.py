"""Submit time: grading each problem's reference on its visible examples and every hidden case.

What a learner waits for after pressing Submit, on a warm pool (one worker, ready when the run arrives), with
the number of hidden cases beside it: each hidden case is one more run of the learner's program, and each
distinct input shape one more trace and compile. The probes draw six hidden shapes at random per Submit, so
the time varies from run to run; the median of ``--reps`` runs is printed, with the load average, because the
machine is shared.

    python benchmarks/submit.py [--reps 5] [--only SLUG ...]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import numpy as np  # noqa: E402

import problems  # noqa: E402
from grader.grading.grade import grade  # noqa: E402
from grader.records import Verdict  # noqa: E402
from grader.grading.workers import worker_pool  # noqa: E402


def _shape(value):
    """A value's structure with its arrays' shapes (what one trace of the learner's program covers)."""
    if isinstance(value, dict):
        return tuple((k, _shape(v)) for k, v in sorted(value.items()))
    if isinstance(value, list):
        try:
            return np.asarray(value, dtype=float).shape
        except (ValueError, TypeError):  # ragged, or a list of subtrees
            return tuple(_shape(v) for v in value)
    return ()


def _shape_key(problem, inputs: dict) -> tuple:
    static = set(problem.static_args)
    return tuple((k, v if k in static else _shape(v)) for k, v in sorted(inputs.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None, help="problem slugs (default: all)")
    args = parser.parse_args()
    chosen = [p for p in problems.registry().values() if not args.only or p.slug in args.only]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| problem | hidden cases | distinct shapes | Submit p50 (s) | min | max |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with worker_pool(size=1, warm=1) as pool:
        for problem in chosen:
            shapes = {repr(_shape_key(problem, c.inputs)) for c in problem.hidden}
            times = []
            for _ in range(args.reps):
                report = grade(problem, problem.reference, run=pool.run)
                assert report.verdict is Verdict.ACCEPTED, (problem.slug, report.message)
                times.append(report.elapsed_s)
            print(f"| {problem.slug} | {len(problem.hidden)} | {len(shapes) or '-'} | {statistics.median(times):.2f} "
                  f"| {min(times):.2f} | {max(times):.2f} |", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
