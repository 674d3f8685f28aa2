"""How many CPU seconds does grading a problem's gallery take under each set of XLA CPU compile options?

With the verifier, a Submit's CPU goes mostly to XLA compiling the rebuilt programs (one per input shape, in
the verifier's process) and the child's traces. Each configuration grades the same galleries with
``python -m grader gallery <slug>`` (a batch on a warm pool, as the test sweep and a teacher's batch do) with
``GRADER_XLA_FLAGS`` set, and reports the CPU seconds of the whole process tree (the command, its fork server,
workers and verifier helpers), the wall time, and whether every file still got the verdict its docstring
states. Configurations alternate, so drifting load hits each alike.

    python benchmarks/grading_cpu.py [--reps 1] [--problems slug ...]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.learner.child import HOST_DEVICES, XLA_FLAGS  # noqa: E402 - after the path

DEVICES = f"--xla_force_host_platform_device_count={HOST_DEVICES}"
CONFIGS = {
    "opt level 0 (before)": f"--xla_backend_optimization_level=0 {DEVICES}",
    "opt 0 + older fusion emitters": f"--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false "
                                     f"{DEVICES}",
}
PROBLEMS = ["exponential-moving-average-with-scan", "gradient-accumulation-with-scan",
            "mixed-precision-with-loss-scaling"]


def grade_gallery(slug: str, flags: str) -> dict:
    env = dict(os.environ, GRADER_XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "grader", "gallery", slug], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # the tree's CPU: every descendant is reaped by the time it exits
    wall = time.monotonic() - started
    last = out.strip().splitlines()[-1] if out.strip() else ""
    m = re.fullmatch(r"(\d+) of (\d+) as stated", last)
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall,
            "as_stated": f"{m[1]}/{m[2]}" if m else f"? ({last[:60]})"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--problems", nargs="*", default=PROBLEMS)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; the default now: {XLA_FLAGS}")
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.reps):
        for slug in args.problems:
            for name, flags in CONFIGS.items():
                runs.setdefault((name, slug), []).append(grade_gallery(slug, flags))
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    first = next(iter(CONFIGS))
    print(f"{'configuration':32s} {'problem':28s} {'CPU s':>7s} {'wall s':>7s} {'CPU ratio':>9s}  as stated")
    for (name, slug), rs in runs.items():
        cpu = statistics.median(r["cpu"] for r in rs)
        base = statistics.median(r["cpu"] for r in runs[(first, slug)])
        print(f"{name:32s} {slug[:28]:28s} {cpu:7.1f} {statistics.median(r['wall'] for r in rs):7.1f} "
              f"{cpu / base:8.2f}x  {', '.join(r['as_stated'] for r in rs)}")


if __name__ == "__main__":
    main()
