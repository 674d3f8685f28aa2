"""Where a warm Run's time and CPU go (issue 33): the child, the verifier, the checks, and the server between them.

Grades Runs one after another through the app's path (``PoolRunner(pool).grade``, the pool and its helpers
warm) and reports, per Run:

* wall time of each stage as the server sees it: the child's run (``pool.run``: the sandboxed trace, with the
  wait for a worker), the verifier (``verifier.verified``: rebuild, compile, run, probes, in a helper), the
  checks (``checker.run_checks``, in a helper), and the rest (the server's own reading and comparing);
* CPU seconds of each kind of process in the tree under this one (workers and their children, verifier
  helpers, checker helpers, this process), read from ``/proc`` before and after each Run (a finished
  child's CPU is counted in its parent's ``cutime``);
* optionally (``--verifier-profile``) a ``cProfile`` of the verifier's own work on the same answer, run in
  this process, so its stages (rebuild, serialise, compile, run, probes) have names.

Each code is graded once to warm the compile caches the class shares (the second Run of the same structure is
what thirty learners on one problem mostly pay), then ``--reps`` times.

    python benchmarks/profile_run.py [--reps 5] [--verifier-profile] [--problems slug ...]
    python benchmarks/profile_run.py --distinct 12 [--problems slug ...]

``--distinct N`` grades N different gallery files of each problem once each (what a class sends, issue 44):
nothing of a file's own structure is warm, only the pool, the helpers and one earlier Run of the reference.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from grader.grading import checker, grade as grade_module  # noqa: E402
from grader.grading.runners import PoolRunner  # noqa: E402
from grader.grading.workers import warm_helpers, worker_pool  # noqa: E402
from grader.verifier import service as verifier  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
DEFAULT = ["rematerialized-mlp-block", "gradient-accumulation-with-scan"]


def _kind(cmdline: str) -> str:
    if "grader.verifier.service" in cmdline:
        return "verifier helper"
    if "grader.grading.checker" in cmdline:
        return "checker helper"
    if "tpu_compile" in cmdline:
        return "tpu compile helper"
    return "worker + child"


def _tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds (own and reaped children's) of each kind of process under ``root``, ``root``'s own (the
    server: the page, the grading threads) and its ended children's."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children[int(fields[1])].append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    totals: dict[str, float] = defaultdict(float)

    def cpu(pid: int) -> float:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15]) / TICK  # utime stime cutime cstime

    def walk(pid: int, kind: str) -> None:
        for child in children.get(pid, []):
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    line = f.read().replace(b"\0", b" ").decode(errors="replace")
                own = kind if kind != "server" else _kind(line)
                totals[own] += cpu(child)
            except OSError:
                continue
            walk(child, own)

    with open(f"/proc/{root}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    totals["server"] = sum(int(v) for v in fields[11:13]) / TICK
    totals["its ended children"] = sum(int(v) for v in fields[13:15]) / TICK  # helpers replaced or killed
    walk(root, "server")
    return dict(totals)


class Stages:
    """Wall time of each stage of a grading, by wrapping the functions ``grade`` calls."""

    def __init__(self) -> None:
        self.times: dict[str, float] = defaultdict(float)

    @contextlib.contextmanager
    def installed(self, runner: PoolRunner):
        originals = (verifier.verified, checker.run_checks, runner.pool.run)

        def timed(name, fn):
            def wrapper(*args, **kwargs):
                started = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.times[name] += time.perf_counter() - started
            return wrapper

        verifier.verified = timed("verifier", originals[0])
        checker.run_checks = timed("checks", originals[1])
        runner.pool.run = timed("child", originals[2])
        try:
            yield
        finally:
            verifier.verified, checker.run_checks, runner.pool.run = originals


def codes_for(problem) -> list[tuple[str, str]]:
    """The reference, the gallery's first wrong answer and first unmet requirement (what a class mostly sends)."""
    out = [("reference", problem.reference)]
    gallery = problem.folder / "submissions"
    for sub in ("wrong_answer", "requirements_not_met"):
        files = sorted((gallery / sub).glob("*.py")) if (gallery / sub).is_dir() else []
        if files:
            out.append((f"{sub}/{files[0].name}", files[0].read_text()))
    return out


def profile_verifier(problem, code: str) -> str:
    """A cProfile of the verifier's work on ``code``'s answer, in this process (the helper's code, not its pipe)."""
    from grader.learner import child
    from grader.verifier.verify import verify

    captured = {}

    def keep(job, outcome, budget_s, memory_bytes=2 << 30):
        captured["job"], captured["result"] = job, outcome.result
        return originals(job, outcome, budget_s, memory_bytes)

    originals = verifier.verified
    verifier.verified = keep
    try:
        grade_module.grade(problem, code, examples_only=True, run=PoolRunner(POOL))
    finally:
        verifier.verified = originals
    t = child.import_jax()
    child.init_backend(t)
    t["child"] = child
    import copy
    verify(t, copy.deepcopy(captured["job"]), copy.deepcopy(captured["result"]))  # warm, as a helper is
    profiler = cProfile.Profile()
    profiler.enable()
    verify(t, captured["job"], captured["result"])
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
    return out.getvalue()


POOL = None


def distinct_codes(problem, count: int) -> list[tuple[str, str]]:
    """``count`` different gallery files of ``problem`` (accepted styles, unmet requirements and wrong answers
    in turn, as a class's Runs mix them); runtime errors and time limits are left to classroom.py."""
    gallery = problem.folder / "submissions"
    kinds = [sorted((gallery / sub).glob("**/*.py")) for sub in ("accepted", "requirements_not_met", "fails",
                                                                   "wrong_answer")]
    out: list[tuple[str, str]] = []
    while len(out) < count and any(kinds):
        for files in kinds:
            if files and len(out) < count:
                f = files.pop(0)
                out.append((str(f.relative_to(gallery)), f.read_text()))
    return out


def run_distinct(runner: PoolRunner, me: int, slugs: list[str], count: int) -> None:
    rows = []
    for slug in slugs:
        problem = problems.get(slug)
        runner.grade(problem, problem.reference, examples_only=True)  # the server's first Run of the problem
        for label, code in distinct_codes(problem, count):
            timer = Stages()
            before = _tree_cpu(me)
            started = time.perf_counter()
            with timer.installed(runner):
                report = runner.grade(problem, code, examples_only=True)
            wall = time.perf_counter() - started
            after = _tree_cpu(me)
            cpu = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in set(before) | set(after)}
            rows.append((wall, dict(timer.times), cpu))
            print(f"{slug} · {label} · {report.verdict.value}: wall {wall:.2f} s, CPU {sum(cpu.values()):.2f} s ("
                  + ", ".join(f"{k} {v:.2f}" for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v > 0.005)
                  + "); " + ", ".join(f"{k} {v:.2f}" for k, v in timer.times.items()), flush=True)
    kinds = sorted({k for _, _, cpu in rows for k in cpu})
    stages = sorted({k for _, times, _ in rows for k in times})
    print(f"\n{len(rows)} distinct Runs: wall median {statistics.median(r[0] for r in rows):.2f} s; "
          f"CPU per Run median {statistics.median(sum(r[2].values()) for r in rows):.2f} s, "
          f"mean {statistics.mean(sum(r[2].values()) for r in rows):.2f} s")
    print("  CPU mean by process: " + ", ".join(f"{k} {statistics.mean(r[2].get(k, 0.0) for r in rows):.2f}"
                                                for k in kinds))
    print("  wall mean by stage: " + ", ".join(f"{k} {statistics.mean(r[1].get(k, 0.0) for r in rows):.2f}"
                                               for k in stages))


def main() -> int:
    global POOL
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--problems", nargs="*", default=DEFAULT)
    parser.add_argument("--verifier-profile", action="store_true")
    parser.add_argument("--distinct", type=int, default=0, metavar="N",
                        help="grade N different gallery files of each problem once each")
    args = parser.parse_args()
    warm_helpers()
    POOL = worker_pool(1)
    POOL.wait_ready(1, timeout=120)
    runner = PoolRunner(POOL)
    me = os.getpid()
    print(f"# python benchmarks/profile_run.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at start; "
          f"one worker, warm helpers; medians over {args.reps} Runs after one warming Run of each code")
    try:
        if args.distinct:
            run_distinct(runner, me, args.problems, args.distinct)
            return 0
        for slug in args.problems:
            problem = problems.get(slug)
            for label, code in codes_for(problem):
                runner.grade(problem, code, examples_only=True)  # warms the compile caches for this structure
                walls, stages, cpus, verdict = [], defaultdict(list), defaultdict(list), ""
                for _ in range(args.reps):
                    timer = Stages()
                    before = _tree_cpu(me)
                    started = time.perf_counter()
                    with timer.installed(runner):
                        report = runner.grade(problem, code, examples_only=True)
                    walls.append(time.perf_counter() - started)
                    after = _tree_cpu(me)
                    verdict = report.verdict.value
                    for k in set(before) | set(after):
                        cpus[k].append(after.get(k, 0.0) - before.get(k, 0.0))
                    for k, v in timer.times.items():
                        stages[k].append(v)
                wall = statistics.median(walls)
                shown = {k: statistics.median(v) for k, v in stages.items()}
                rest = wall - sum(shown.values())
                print(f"\n{slug} · {label} · {verdict}: wall {wall:.3f} s")
                print("  wall by stage: " + ", ".join(f"{k} {v:.3f}" for k, v in shown.items())
                      + f", server's own {rest:.3f}")
                cpu = {k: statistics.median(v) for k, v in cpus.items()}
                print(f"  CPU {sum(cpu.values()):.3f} s: "
                      + ", ".join(f"{k} {v:.3f}" for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v > 0))
            if args.verifier_profile:
                print(f"\n{slug}: the verifier's work on the reference's answer (cProfile, cumulative)")
                print(profile_verifier(problem, problem.reference))
    finally:
        POOL.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
