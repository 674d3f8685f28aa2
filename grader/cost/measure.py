"""What the learner's structure buys: their program, the reference and the naive baseline compiled at the
problem's realistic size (``insight.toml``) and measured by XLA, never run at that size.

Each measurement is an ordinary job on the grading pool (``"kind": "cost"``, run by ``cost_child.py`` in the
same sandboxed child as a grading) under its own ``COST_LIMITS``. The trusted programs (reference, baseline,
compared programs) are measured in a job of their own, without learner code in the process, and kept for
the life of the server: later measurements of the same problem and size only compile the learner's code.
"""
from __future__ import annotations

import copy
import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from typing import Any, Callable

from grader.cost import plans
from grader.cost.records import CostReport, ProgramCost, Residual
from grader.cost.targets import CPU, TARGETS, Target, note, tpu_extra
from grader.sandbox import Limits, RunOutcome, refusal
from grader.grading.workers import run_job
from grader.grading import source_policy
from problems import Problem
from problems.insight import Insight

Runner = Callable[[dict[str, Any], Limits], RunOutcome]

COST_LIMITS = Limits(wall_s=300.0, memory_bytes=3 << 30, address_space_bytes=12 << 30)
"""A measurement compiles a dozen or more programs at a realistic size (tens of seconds on a busy machine,
up to about 1 GiB while XLA compiles); it never allocates the arrays themselves."""
TPU_COST_LIMITS = Limits(wall_s=600.0, memory_bytes=3 << 30, address_space_bytes=12 << 30)
"""A TPU target's measurement: the TPU compiler is slower than the CPU's on some programs (a top-k over a
32,000-word vocabulary: 50 s a compile on two busy cores, a beam search's trusted job 240 s of its wall
clock), so twice the time; libtpu (690 MB, mapped: 2.3 GB of address space) and the compiler's peak
(1.2 GB resident, measured over every problem's programs) fit the CPU's memory limits."""
BUDGET_SHARE = 0.8
"""The child starts no new program past this share of the wall-clock limit, so what it measured comes back."""
LEARNER_FILE = "solution.py"
LEARNER_TITLE = "your code"


@dataclass(frozen=True)
class Point:
    """One program at one size, as the report labels it."""

    label: str
    program: str
    title: str
    at: tuple[tuple[str, int], ...]
    sizes: tuple[tuple[str, int], ...]


def plan(insight: Insight, sizes: dict[str, int], sweep_values: list[int] | None = None,
         target: Target = CPU) -> list[Point]:
    """Every program at the declared size, then the swept programs at each sweep point (the programs the
    insight declares for this target's platform)."""
    programs = insight.programs_for(target.platform)
    titles = {"learner": LEARNER_TITLE, **{p.name: p.title for p in programs}}
    names = ["learner"] + [p.name for p in programs]
    points = [Point(n, n, titles[n], (), tuple(sorted(sizes.items()))) for n in names]
    sweep = insight.sweep
    if sweep is not None:
        for n in [n for n in names if n in sweep.programs]:
            for value in sweep_values if sweep_values is not None else sweep.points(sizes):
                at = dict(sizes, **{sweep.size: value})
                points.append(Point(f"{n}@{sweep.name}={value}", n, titles[n], ((sweep.name, value),),
                                    tuple(sorted(at.items()))))
    return points


def _job(problem: Problem, codes: dict[str, str], points: list[Point], files: dict[str, str], residuals: bool,
         limits: Limits, target: Target = CPU) -> tuple[dict[str, Any], list[tuple[str, tuple]]]:
    """The child's job for these points, one program per distinct (code, size), and that key per point."""
    insight = problem.insight
    assert insight is not None
    keys, programs = [], []
    for point in points:
        key = (point.program, point.sizes)
        keys.append(key)
        if key in [(p["program"], p["sizes_key"]) for p in programs]:
            continue
        programs.append({"label": point.label, "program": point.program, "sizes_key": point.sizes,
                         "file": files[point.program], "residuals": residuals,
                         "shapes": insight.shapes_at(dict(point.sizes))})
    job = {"kind": "cost", "entry": problem.entry, "args": [asdict(a) for a in problem.args], "codes": codes,
           "programs": [{k: v for k, v in p.items() if k != "sizes_key"} for p in programs],
           "budget_s": round(limits.wall_s * BUDGET_SHARE, 1)}
    if target.job() is not None:
        job["target"] = dict(target.job(), all_devices=insight.tpu_all_devices)
    return job, [(p["program"], p["sizes_key"]) for p in programs]


class _TrustedCache:
    """The trusted programs' figures, per problem, size and code (they do not change between learners).

    ``get_or_measure`` lets one caller measure a key while the others wait for its figures, so a class
    pressing Cost at once on a new problem starts one trusted job, not thirty."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: dict[str, dict[tuple, ProgramCost]] = {}
        self.measuring: dict[str, threading.Lock] = {}

    def key(self, problem: Problem, codes: dict[str, str], sizes: Any, target: str = "cpu") -> str:
        text = repr((problem.slug, sorted(codes.items()), sizes, problem.insight, target))
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> dict[tuple, ProgramCost] | None:
        with self.lock:
            found = self.entries.get(key)
            return copy.deepcopy(found) if found is not None else None

    def get_or_measure(self, key: str, measure: Callable[[], Any]) -> Any:
        """The remembered figures, or ``measure()``'s result (remembered when every program was measured)."""
        with self.lock:
            turn = self.measuring.setdefault(key, threading.Lock())
        with turn:
            found = self.get(key)
            if found is not None:
                return found
            got = measure()
            if isinstance(got, dict) and all(p.ok for p in got.values()):
                with self.lock:
                    self.entries[key] = copy.deepcopy(got)
            return got


TRUSTED = _TrustedCache()


def measure_cost(problem: Problem, code: str, *, file: str = "<editor>", small: bool = False,
                 sizes: dict[str, int] | None = None, sweep_values: list[int] | None = None,
                 run: Runner = run_job, limits: Limits | None = None, parallel: bool = False,
                 cache: bool = True, target: str = "cpu") -> CostReport:
    """Measure ``code`` beside the problem's own programs at its declared size (``small``: the test size;
    ``sizes``: overrides; ``sweep_values``: other sweep points). ``run`` is ``run_job`` or a pool's ``run``;
    with ``parallel`` the trusted and the learner's job run at once (the CLI), otherwise one after the other
    in the caller's thread (a page, so a pool's ``on_position`` callback stays in the script's thread).
    ``target``: a name of ``targets.TARGETS`` (a TPU's needs the extra: ``error_kind`` ``missing_extra``)."""
    started = time.monotonic()
    insight = problem.insight
    if target not in TARGETS:
        return CostReport(problem=problem.slug, file=file, size={}, ok=False, error_kind="unknown_target",
                          target=target, error=f"No target {target!r}; known: {', '.join(TARGETS)}.")
    chosen = TARGETS[target]
    limits = limits or (COST_LIMITS if chosen.platform == "cpu" else TPU_COST_LIMITS)
    if insight is None:
        return CostReport(problem=problem.slug, file=file, size={}, ok=False, error_kind="no_insight", target=target,
                          error=f"The problem {problem.slug!r} declares no insight (no insight.toml).")
    if chosen.platform != "cpu":
        installed, why = tpu_extra()
        if not installed:
            return CostReport(problem=problem.slug, file=file, size={}, ok=False, error_kind="missing_extra",
                              target=target, error=f"The target {target!r} needs the optional TPU extra: {why}.")
    at = insight.sizes_for(small, **(sizes or {}))
    report = CostReport(problem=problem.slug, file=file, size=at, shapes=insight.shapes_at(at), target=target,
                        summary=insight.summary_for(chosen.platform),
                        sweep_name=insight.sweep.name if insight.sweep else "",
                        charts=[insight.chart_for(c, chosen.platform) for c in insight.charts_for(chosen.platform)])
    if chosen.platform != "cpu":
        report.note = note(chosen)
    if sweep_values is None and insight.sweep is not None:
        sweep_values = insight.sweep.points(at, small)
    points = plan(insight, at, sweep_values, chosen)
    refused = refusal()
    if refused:
        return _failed(report, "grader", "This server runs code only inside its sandbox, and the sandbox is not "
                       f"working, so nothing was measured. This is not your fault. ({refused})", started)
    against = source_policy.unreadable(code) or (source_policy.check(code) if source_policy.ENABLED else None)
    if against is not None:  # the same first layer as grading (grader/grading/source_policy.py)
        return _failed(report, "learner", against.message(), started)
    programs = insight.programs_for(chosen.platform)
    trusted_files = {p.name: p.file for p in programs}
    trusted_codes = {p.file: insight.code(p.name) for p in programs}
    key = TRUSTED.key(problem, trusted_codes, (at, sweep_values), target)

    def trusted_job() -> dict[tuple, ProgramCost] | str:
        job, keys = _job(problem, trusted_codes, [p for p in points if p.program != "learner"], trusted_files,
                         insight.residuals, limits, chosen)
        return _collect(run, job, keys, limits, report, "trusted")

    def shipped_or_measured() -> dict[tuple, ProgramCost] | str:
        shipped = plans.load(problem, target, plans.plan_key(problem, target, trusted_codes, at, sweep_values))
        if shipped is not None:
            report.jobs.append({"job": "trusted", "programs": len(shipped), "shipped": True, "elapsed_s": 0.0,
                                "cpu_s": 0.0, "peak_rss_bytes": None, "limit": None})
            return shipped
        return trusted_job()

    def trusted_figures() -> dict[tuple, ProgramCost] | str:
        return TRUSTED.get_or_measure(key, shipped_or_measured) if cache else trusted_job()

    def learner_job() -> dict[tuple, ProgramCost] | str:
        job, keys = _job(problem, {LEARNER_FILE: code}, [p for p in points if p.program == "learner"],
                         {"learner": LEARNER_FILE}, insight.residuals, limits, chosen)
        return _collect(run, job, keys, limits, report, "learner")

    try:
        if parallel:
            with ThreadPoolExecutor(max_workers=1) as pool:
                pending = pool.submit(trusted_figures)
                mine = learner_job()
                trusted = pending.result()
        else:
            trusted = trusted_figures()
            mine = learner_job()
    except Exception as exc:  # noqa: BLE001 - a pool refusing the job (busy, closed) is the caller's to show
        if type(exc).__name__ in ("PoolBusy", "PoolClosed"):
            raise
        return _failed(report, "grader", f"The measurement failed ({type(exc).__name__}: {str(exc)[:200]}); "
                       "this is not your fault.", started)
    if isinstance(trusted, str):
        return _failed(report, "grader", "The problem's own programs could not be measured; this is not your "
                       f"fault. ({trusted})", started)
    if isinstance(mine, tuple):  # the learner's code did not load, ran too long, ...
        kind, message, tb = mine
        report.traceback = tb
        _failed(report, kind, message, started)
        mine = {}
    figures = {**trusted, **mine}
    for point in points:
        got = figures.get((point.program, point.sizes))
        cost = copy.deepcopy(got) if got is not None else ProgramCost(label="", program="", title="", ok=False,
                                                                        error="not measured")
        cost.label, cost.program, cost.title, cost.at = point.label, point.program, point.title, dict(point.at)
        report.programs.append(cost)
    learner = report.program("learner")
    if report.ok and learner is not None and not learner.ok:
        report.ok, report.error_kind = False, "learner"
        report.error = (f"Your function could not be traced and compiled at the declared size "
                        f"({_size_text(report.shapes)}): {learner.error}")
        report.traceback = learner.traceback
    if insight.sweep is not None:
        report.sweep = [{insight.sweep.name: p.at[insight.sweep.name], "label": p.label, "ok": p.ok,
                         "peak_bytes": p.peak_bytes, "temp_bytes": p.temp_bytes, "argument_bytes": p.argument_bytes,
                         "output_bytes": p.output_bytes, "flops": p.flops, "residual_bytes": p.residual_bytes,
                         **({"error": p.error} if not p.ok else {})}
                        for p in report.programs if p.program == "learner" and p.at]
    report.elapsed_s = round(time.monotonic() - started, 3)
    return report


def measure_trusted(problem: Problem, target: str = "tpu-v5e", run: Runner = run_job
                    ) -> tuple[str, dict[tuple, ProgramCost] | str]:
    """The trusted programs' figures at the declared size and sweep points, compiled now (no cache, no shipped
    plan), with their ``plans.plan_key``: what ``benchmarks/plans.py`` writes and the plans' test recompiles."""
    insight = problem.insight
    assert insight is not None
    chosen = TARGETS[target]
    limits = COST_LIMITS if chosen.platform == "cpu" else TPU_COST_LIMITS
    at = insight.sizes_for(False)
    sweep_values = insight.sweep.points(at, False) if insight.sweep is not None else None
    programs = insight.programs_for(chosen.platform)
    files = {p.name: p.file for p in programs}
    codes = {p.file: insight.code(p.name) for p in programs}
    points = [p for p in plan(insight, at, sweep_values, chosen) if p.program != "learner"]
    report = CostReport(problem=problem.slug, file="", size=at, target=target)
    job, keys = _job(problem, codes, points, files, insight.residuals, limits, chosen)
    return plans.plan_key(problem, target, codes, at, sweep_values), _collect(run, job, keys, limits, report,
                                                                             "trusted")


def _failed(report: CostReport, kind: str, message: str, started: float) -> CostReport:
    report.ok, report.error_kind, report.error = False, kind, message
    report.elapsed_s = round(time.monotonic() - started, 3)
    return report


def _size_text(shapes: dict[str, Any]) -> str:
    """``params: w1 (512, 512), b1 (512,); x (4096, 512); num_microbatches=16``."""
    def one(value: Any) -> str:
        if isinstance(value, dict):
            return ", ".join(f"{k} {one(v)}" if not isinstance(v, dict) else f"{k}: {{{one(v)}}}"
                             for k, v in value.items())
        if isinstance(value, list) and all(isinstance(d, int) for d in value):
            return str(tuple(value))
        if isinstance(value, list):
            return "[" + ", ".join(one(v) for v in value) + "]"
        return str(value)
    return "; ".join(f"{name}: {one(v)}" if isinstance(v, dict) else
                     (f"{name} {one(v)}" if isinstance(v, list) else f"{name}={v}") for name, v in shapes.items())


_PROGRAM_FIELDS = {f.name for f in fields(ProgramCost)}


def _collect(run: Runner, job: dict[str, Any], keys: list[tuple], limits: Limits, report: CostReport,
             which: str) -> dict[tuple, ProgramCost] | str | tuple[str, str, str]:
    """Run one job. The programs' figures by (program, sizes); on failure a message (trusted code: ours) or
    ``(error_kind, message, traceback)`` for the learner's."""
    trusted = which == "trusted"
    outcome = run(job, limits)
    report.jobs.append({"job": which, "programs": len(job["programs"]), "elapsed_s": round(outcome.elapsed_s, 3),
                        "cpu_s": round(outcome.cpu_s, 3), "peak_rss_bytes": outcome.peak_rss_bytes,
                        "limit": outcome.limit})
    problem = _outcome_problem(outcome, limits)
    if problem is not None:
        return problem[1] if trusted else problem
    out: dict[tuple, ProgramCost] = {}
    for key, got in zip(keys, outcome.result.get("programs", [])):
        cost = ProgramCost(label=got.get("label", ""), program=key[0], title="")
        if got.get("status") != "ok":
            cost.ok = False
            cost.error = str(got.get("message", got.get("status", "error")))
            cost.traceback = str(got.get("traceback", ""))
        else:
            for name, value in got.items():
                if name in _PROGRAM_FIELDS and name not in ("label", "program", "title", "residuals"):
                    setattr(cost, name, value)
            cost.residuals = [Residual(**{k: r.get(k) for k in ("name", "kind", "shape", "dtype", "bytes", "line",
                                                               "code", "scope", "primitive")})
                              for r in got.get("residuals", [])]
            if got.get("residual_error"):
                cost.cost_note = (cost.cost_note + "; " if cost.cost_note else "") + \
                    "residuals could not be listed: " + got["residual_error"]
        out[key] = cost
    if trusted and any(not c.ok for c in out.values()):
        bad = next(c for c in out.values() if not c.ok)
        return f"{bad.label}: {bad.error}"
    return out


def _outcome_problem(outcome: RunOutcome, limits: Limits) -> tuple[str, str, str] | None:
    """``(error_kind, message, traceback)`` when the job as a whole failed, else None."""
    if outcome.limit == "time":
        return ("learner", f"Measuring took more than {limits.wall_s:g} s and was stopped. Tracing your function "
                "at the declared size should take seconds: look for a Python loop that runs once per row.", "")
    if outcome.limit == "memory":
        return ("learner", f"Measuring used more than {limits.memory_bytes / 2**30:g} GiB and was stopped. "
                "Compiling allocates no arrays: look for NumPy work done while your function is traced.", "")
    if outcome.limit in ("output", "disk"):
        return ("learner", "Your code printed or wrote too much while it was measured and was stopped.", "")
    result = outcome.result
    if result is None:
        why = outcome.result_error or f"exit status {outcome.exit_code}"
        return ("learner", f"The measurement stopped before it answered ({why}). Do not exit, or close file "
                "descriptors, from your code.", "")
    status = result.get("status")
    tb = str(result.get("traceback", ""))
    if status == "ok":
        return None
    if status == "syntax_error":
        line = f" on line {result['line']}" if result.get("line") else ""
        return ("submission", f"{result.get('message')}{line}.", tb)
    if status == "load_error":
        return ("learner", f"Your code raised while it was being loaded: {result.get('message')}", tb)
    if status == "missing_entry":
        return ("submission", str(result.get("message")), tb)
    if status == "memory_error":
        return ("learner", "Your code tried to allocate more memory than allowed.", tb)
    if status == "tampered":
        return ("learner", str(result.get("message")), tb)
    if status == "target_error":
        return ("grader", "The TPU compiler could not be started, so nothing was measured; this is not your "
                f"fault. ({result.get('message')})", "")
    if status == "sandbox_unavailable":
        return ("grader", "The sandbox is not working, so nothing was measured; this is not your fault. "
                f"({result.get('message')})", "")
    return ("grader", f"The measurement itself failed; this is not your fault. ({result.get('message', status)})", tb)
