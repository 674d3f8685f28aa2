"""``python -m grader cost PROBLEM FILE [--json]``: what a submission's structure buys, measured by XLA."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import problems
from grader.cost.measure import COST_LIMITS, TPU_COST_LIMITS, measure_cost
from grader.cost.records import CostReport, ProgramCost
from grader.cost.targets import EXTRA, TARGETS, tpu_extra
from grader.sandbox import Limits


def add_parser(sub: argparse._SubParsersAction) -> None:
    cost = sub.add_parser("cost", help="measure a file's memory and FLOPs beside the reference and the baseline, "
                                       "at the problem's realistic size (compiled, never run)")
    cost.add_argument("problem", nargs="?", help="the problem's slug (one with an insight.toml)")
    cost.add_argument("file", nargs="?")
    cost.add_argument("--target", default="cpu", metavar="NAME",
                      help="compile for this target: cpu (this machine, the default) or a TPU, compiled ahead of "
                           f"time without one (needs {EXTRA}); see --targets")
    cost.add_argument("--targets", action="store_true", help="list the targets and whether each is available")
    cost.add_argument("--json", action="store_true", help="print one JSON object")
    cost.add_argument("--small", action="store_true", help="at the problem's small test size instead")
    cost.add_argument("--size", action="append", default=[], metavar="NAME=N",
                      help="override one named size, e.g. --size B=1024 (repeatable)")
    cost.add_argument("--sweep", default="", metavar="N,N,...", help="measure the sweep at these values instead")
    cost.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                      help=f"wall-clock seconds per measurement job (default {COST_LIMITS.wall_s:g}, "
                           f"{TPU_COST_LIMITS.wall_s:g} on a TPU target)")


def list_targets(as_json: bool) -> int:
    """``--targets``: each target, what it compiles for, and whether this installation has it."""
    installed, why = tpu_extra()
    rows = [{"name": t.name, "label": t.label, "platform": t.platform, "topology": t.topology or None,
             "available": t.platform == "cpu" or installed,
             "detail": "this machine's CPU" if t.platform == "cpu" else f"{t.chip}; {why}"}
            for t in TARGETS.values()]
    if as_json:
        print(json.dumps({"targets": rows}, indent=2))
    else:
        for row in rows:
            print(f"{'ok ' if row['available'] else '-- '} {row['name']:8s} {row['label']:34s} {row['detail']}")
    return 0


def run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Exit 0 when the learner's program was measured, 1 when it could not be, 2 for a usage error (a TPU
    target without the extra included: a JSON error with ``--json``)."""
    if args.targets:
        return list_targets(args.json)
    if not args.problem or not args.file:
        parser.exit(2, "python -m grader cost: give PROBLEM and FILE (or --targets)\n")
    if args.target not in TARGETS:
        parser.exit(2, f"python -m grader: --target {args.target!r}: one of {', '.join(TARGETS)}\n")
    if TARGETS[args.target].platform != "cpu":
        installed, why = tpu_extra()
        if not installed:
            message = f"The target {args.target!r} needs the optional TPU extra: {why}."
            if args.json:
                print(json.dumps({"target": args.target, "problem": args.problem, "file": args.file, "ok": False,
                                  "error_kind": "missing_extra", "extra": EXTRA, "error": message}, indent=2))
            else:
                print(f"python -m grader: {message}", file=sys.stderr)
            return 2
    registry = problems.registry()
    if args.problem not in registry:
        parser.exit(2, f"python -m grader: unknown problem {args.problem!r}. Known problems:\n"
                       + "".join(f"  {slug}\n" for slug in registry))
    problem = registry[args.problem]
    if problem.insight is None:
        with_insight = [slug for slug, p in registry.items() if p.insight is not None]
        parser.exit(2, f"python -m grader: {args.problem!r} declares no insight (insight.toml). Problems that do:\n"
                       + "".join(f"  {slug}\n" for slug in with_insight))
    if not Path(args.file).is_file():
        parser.exit(2, f"python -m grader: no such file: {args.file}\n")
    sizes = {}
    for item in args.size:
        name, _, value = item.partition("=")
        if name not in problem.insight.sizes or not value.isdigit() or int(value) < 1:
            parser.exit(2, f"python -m grader: --size {item!r}: expected NAME=N with NAME one of "
                           f"{sorted(problem.insight.sizes)}\n")
        sizes[name] = int(value)
    sweep_values = None
    if args.sweep:
        if problem.insight.sweep is None or not all(v.isdigit() and int(v) > 0 for v in args.sweep.split(",")):
            parser.exit(2, f"python -m grader: --sweep {args.sweep!r}: positive integers, for a problem with a sweep\n")
        sweep_values = [int(v) for v in args.sweep.split(",")]
    code = Path(args.file).read_text(encoding="utf-8", errors="replace")
    base = COST_LIMITS if TARGETS[args.target].platform == "cpu" else TPU_COST_LIMITS
    limits = Limits(wall_s=args.time_limit or base.wall_s, memory_bytes=base.memory_bytes,
                    address_space_bytes=base.address_space_bytes)
    report = measure_cost(problem, code, file=args.file, small=args.small, sizes=sizes, sweep_values=sweep_values,
                          limits=limits, parallel=True, target=args.target)
    print(json.dumps(report.to_json(), indent=2) if args.json else render_text(report))
    return 0 if report.ok else 1


def human_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def human_count(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:g}"


def render_text(report: CostReport) -> str:
    """A readable summary: the size, a table of programs, the sweep, each residual list, the takeaways."""
    from grader.cost.measure import _size_text
    lines = [f"{report.file}: cost on {report.problem}, compiled for {report.target} ({report.elapsed_s:.1f} s)"]
    if report.size:
        lines.append("  size: " + ", ".join(f"{k}={v}" for k, v in report.size.items()))
        lines.append("  shapes: " + _size_text(report.shapes))
    if not report.ok:
        lines.append(f"  ERROR ({report.error_kind}): {report.error}")
        if report.traceback:
            lines.extend("    " + line for line in report.traceback.rstrip().splitlines())
    if report.summary:
        lines.append(f"  {report.summary}")
    if report.programs:
        lines.append("")
        head = f"  {'program':34s} {'peak':>10s} {'temp':>10s} {'arguments':>10s} {'outputs':>10s} {'FLOPs':>10s} " \
               f"{'XLA FLOPs':>10s} {'as written':>10s} {'residuals':>10s} {'HLO instr':>9s}"
        lines += [head, "  " + "-" * (len(head) - 2)]
        for p in report.programs:
            lines.append(_row(p))
    for p in report.programs:
        if p.residuals and not p.at:
            lines.append("")
            lines.append(f"  saved for the backward pass by {p.label} ({p.title}): {human_bytes(p.residual_bytes)}")
            for r in p.residuals:
                where = f"line {r.line}: {r.code}" if r.line else ""
                scope = f" [{r.scope}]" if r.scope else ""
                lines.append(f"    {human_bytes(r.bytes):>10s}  {r.dtype}{r.shape}  {r.name}{scope}  {where}")
    for chart in report.charts:
        lines.append("")
        lines.append(f"  {chart['title']}: {chart['takeaway']}")
    lines.append("")
    lines.append(f"  {report.note}")
    lines.append("  FLOPs count every step of each loop; XLA FLOPs is XLA's own count, which visits a loop body once;")
    lines.append("  as written: XLA's count of the program as JAX lowered it, before XLA's optimisations.")
    return "\n".join(lines)


def _row(p: ProgramCost) -> str:
    name = p.label if p.at or p.label == "learner" else f"{p.label}: {p.title}"
    if not p.ok:
        return f"  {name[:34]:34s} not measured: {p.error[:120]}"
    return (f"  {name[:34]:34s} {human_bytes(p.peak_bytes):>10s} {human_bytes(p.temp_bytes):>10s} {human_bytes(p.argument_bytes):>10s} "
            f"{human_bytes(p.output_bytes):>10s} {human_count(p.flops):>10s} {human_count(p.flops_xla):>10s} "
            f"{human_count(p.flops_lowered):>10s} {human_bytes(p.residual_bytes):>10s} "
            f"{p.hlo_instructions if p.hlo_instructions is not None else '-':>9}")
