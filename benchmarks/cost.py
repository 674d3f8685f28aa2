"""The figures behind each problem's Cost tab: every declared insight measured at its realistic size, the
reference standing in for the learner's code, through the same sandboxed children a page would use.

Writes, per problem, ``results/cost_<slug>.json`` (``python -m grader cost --json``'s object) and
``results/cost_<slug>.txt`` (the text summary, then each chart as the table the tab would draw), and
``results/cost_summary.txt`` (the load average, each measurement's time and peak memory). ``--small``
measures the test sizes instead (files ``cost_<slug>_small.*``); ``--target tpu-v5e`` compiles for a TPU
instead of this machine (needs requirements-tpu.txt; files ``cost_tpu-v5e_<slug>.*``).

    python benchmarks/cost.py [SLUG ...] [--small] [--target NAME]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from grader.cost.measure import measure_cost  # noqa: E402
from grader.cost.charts import chart_data  # noqa: E402
from grader.cost.cli import render_text  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def chart_tables(report_json: dict) -> str:
    """Each chart as the tab would draw it: title, axis labels, the values in the chart's unit, takeaway."""
    out = []
    for chart in chart_data(report_json):
        frame = chart.wide()
        out.append(f"## {chart.title} ({chart.kind} chart)")
        out.append(f"x: {chart.x_label}; y: {chart.y_label}")
        out.append(frame.round(3).to_string())
        if chart.missing:
            out.append("not measured: " + "; ".join(chart.missing))
        out.append(f"takeaway: {chart.takeaway}")
        out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    slugs = args.slugs or [s for s, p in problems.registry().items() if p.insight is not None]
    suffix = "_small" if args.small else ""
    prefix = "" if args.target == "cpu" else f"{args.target}_"
    summary = [f"# python benchmarks/cost.py {' '.join(sys.argv[1:])}".rstrip(),
               f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average at start "
               f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"]
    for slug in slugs:
        problem = problems.get(slug)
        report = measure_cost(problem, problem.reference, file=f"problems/{slug}/reference.py", small=args.small,
                              parallel=True, target=args.target)
        data = report.to_json()
        (RESULTS / f"cost_{prefix}{slug}{suffix}.json").write_text(json.dumps(data, indent=1) + "\n")
        text = render_text(report) + "\n\n" + chart_tables(data)
        (RESULTS / f"cost_{prefix}{slug}{suffix}.txt").write_text(text)
        jobs = ", ".join(f"{j['job']} job {j['programs']} programs {j['elapsed_s']:.1f} s wall, {j['cpu_s']:.1f} s "
                         f"CPU, peak {j['peak_rss_bytes'] / 2**20:.0f} MiB" for j in report.jobs)
        line = f"{slug}: {'ok' if report.ok else 'ERROR ' + report.error} in {report.elapsed_s:.1f} s ({jobs})"
        print(line, flush=True)
        summary.append(line)
    summary.append(f"# load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    (RESULTS / f"cost_{prefix}summary{suffix}.txt").write_text("\n".join(summary) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
