"""Compile every Pallas problem's reference kernel and its `jnp` baseline for a TPU v5e once, and ship the
figures its Cost tab shows (``grader/cost/kernel_cost.py``).

For each problem with ``[tpu_compile]`` and a ``baseline.py``: the reference traced at the realistic size,
handed over as data and compiled by the trusted compile row's own function (its planned peak, and the
kernel's HBM bytes and FLOPs counted from its grid and blocks), and the baseline compiled by XLA for one v5e
chip (bytes accessed, FLOPs, planned peak), written to ``problems/<slug>/plans/kernel-tpu-v5e.json`` with the
key of the code they are for. Needs the TPU extra (requirements-tpu.txt), no TPU. Run it again after changing
a reference, a baseline, the size or ``grader/cost/kernel_model.py``; ``tests/test_kernel_cost.py`` says when.

    python benchmarks/kernel_plans.py [SLUG ...]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from grader.cost import kernel_cost  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("slugs", nargs="*")
    args = parser.parse_args()
    slugs = args.slugs or [s for s, p in problems.registry().items() if kernel_cost.declared(p)]
    for slug in slugs:
        problem = problems.get(slug)
        started = time.monotonic()
        data = kernel_cost.compute(problem)
        path = problem.folder / kernel_cost.FILE
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{slug}: {path.relative_to(ROOT)} in {time.monotonic() - started:.1f} s: reference "
              f"{data['reference'].get('status')}, baseline {data['baseline']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
