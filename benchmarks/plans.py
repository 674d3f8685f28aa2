"""Compile the trusted programs of every problem's insight once and ship their plans (issue 32).

For each problem with an insight: the reference, the baseline and the compared programs at the declared size
and every sweep point, compiled for the target through the same sandboxed child a page uses, written to
``problems/<slug>/plans/<target>.json`` with the key they are valid for (``grader/cost/plans.py``). A Cost tab
measurement then compiles only the learner's programs. Run it again after changing a reference, a baseline,
an insight's sizes, or jax/jaxlib/libtpu; ``tests/test_cost_plans.py`` says when it is due.

    python benchmarks/plans.py [SLUG ...] [--target tpu-v5e]
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
from grader.cost import plans  # noqa: E402
from grader.cost.measure import measure_trusted  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("--target", default="tpu-v5e")
    args = parser.parse_args()
    slugs = args.slugs or [s for s, p in problems.registry().items() if p.insight is not None]
    failed = 0
    for slug in slugs:
        problem = problems.get(slug)
        started = time.monotonic()
        key, figures = measure_trusted(problem, args.target)
        if isinstance(figures, str):
            print(f"{slug}: not written ({figures})", flush=True)
            failed += 1
            continue
        path = plans.path_for(problem, args.target)
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(plans.dump(problem, args.target, key, figures), indent=1, sort_keys=True) + "\n")
        print(f"{slug}: {len(figures)} programs in {time.monotonic() - started:.1f} s -> "
              f"{path.relative_to(ROOT)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
