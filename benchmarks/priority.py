"""The priority drop of a long run, side by side: a fresh Run's latency beside a CPU-bound run past 3 s.

A pool of two slots (fork server, warm workers, ``long_after_s=3``) holds a hog: a submission whose function
multiplies large matrices in a loop until its time limit, which XLA spreads over every core. Once it has run
3 s the pool drops it (``pool._lower_priority``) and fresh Runs of the reference (visible examples, the
app's path) are timed one after another. Three ways:

* ``alone``: no hog (the baseline);
* ``thread nice``: the hog dropped by each thread's nice only, as before issue 20: with
  ``kernel.sched_autogroup_enabled`` a thread's nice ranks it only inside its own session, and every worker
  starts one, so this is the same as no drop at all;
* ``autogroup``: the drop as it is now (the session's autogroup nice too).

Prints each Run's seconds, the medians and each median's ratio to ``alone``, with the load average, since
the machine may be shared. First, the same three ways on two bare busy processes, each in a session of its
own and both pinned to one CPU, one of them dropped: the CPU seconds each got in the same interval.

    python benchmarks/priority.py [--reps 6] [--slug rematerialized-mlp-block]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import problems  # noqa: E402
from grader.grading.grade import build_job, grade  # noqa: E402
from grader.records import Verdict  # noqa: E402
from grader.sandbox import pool as pool_module  # noqa: E402
from grader.sandbox.outcome import Limits  # noqa: E402
from grader.grading.workers import worker_pool  # noqa: E402

HOG = """
import jax
import jax.numpy as jnp

def {entry}(*args):
    with jax.ensure_compile_time_eval():  # run now, even while the grader traces the function
        a = jnp.ones((1024, 1024))
        while True:
            a = (a @ a) * 1e-3
            a.block_until_ready()
"""


def thread_nice_only(root: int, nice: int, group_nice: int | None = None) -> list[str]:
    """The drop before issue 20: every thread's nice, nothing else."""
    for pid in _tree(root):
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                os.setpriority(os.PRIO_PROCESS, int(tid), nice)
            except OSError:
                pass
    return []


def _tree(root: int) -> list[int]:
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for t in os.listdir(f"/proc/{pid}/task"):
                todo += [int(c) for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
        except OSError:
            pass
    return out


def sessions(mode: str, seconds: float = 3.0) -> tuple[float, float]:
    """CPU seconds of a busy process and of a dropped one (``mode``), separate sessions, one CPU."""
    import subprocess
    cpu = min(os.sched_getaffinity(0))
    busy = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass\n"
    a, b = (subprocess.Popen([sys.executable, "-c", busy], start_new_session=True) for _ in range(2))
    try:
        time.sleep(0.3)
        if mode == "thread nice":
            thread_nice_only(b.pid, pool_module.LONG_RUN_NICE)
        elif mode == "autogroup":
            pool_module._lower_priority(b.pid, pool_module.LONG_RUN_NICE, pool_module.LONG_RUN_GROUP_NICE)
        start = _cpu(a.pid), _cpu(b.pid)
        time.sleep(seconds)
        return _cpu(a.pid) - start[0], _cpu(b.pid) - start[1]
    finally:
        for p in (a, b):
            p.kill()
            p.wait()


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(problem: problems.Problem, mode: str, reps: int) -> list[float]:
    original = pool_module._lower_priority
    if mode == "thread nice":
        pool_module._lower_priority = thread_nice_only
    pool = worker_pool(size=2, warm=2, long_after_s=3.0)
    try:
        assert pool.wait_ready(timeout=120)
        hog = None
        if mode != "alone":
            job = build_job(problem, HOG.format(entry=problem.entry), examples_only=True)
            hog = threading.Thread(target=lambda: _swallow(pool.run, job, Limits(wall_s=600)), daemon=True)
            hog.start()
            deadline = time.monotonic() + 60
            while pool.stats().long_running < 1:
                assert time.monotonic() < deadline, "the hog never became a long run"
                time.sleep(0.05)
            time.sleep(1.0)  # the hog at full speed, and the pool's next worker ready
            assert pool.wait_ready(1, timeout=120)
        times = []
        for _ in range(reps):
            assert pool.wait_ready(1, timeout=120)
            time.sleep(0.3)  # the refill's start-up done: the Run competes with the hog only
            t0 = time.perf_counter()
            report = grade(problem, problem.reference, examples_only=True, run=pool.run)
            times.append(time.perf_counter() - t0)
            assert report.verdict is Verdict.ACCEPTED, report.message
        return times
    finally:
        pool.shutdown()
        pool_module._lower_priority = original


def _swallow(fn, *args) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - the pool shut down under the hog: expected
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--slug", default="rematerialized-mlp-block")
    args = ap.parse_args()
    problem = problems.get(args.slug)
    print(f"priority drop: {args.slug}, {args.reps} Runs per mode, {os.cpu_count()} CPUs, "
          f"sched_autogroup_enabled={Path('/proc/sys/kernel/sched_autogroup_enabled').read_text().strip()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for mode in ("alone", "thread nice", "autogroup"):
        a, b = sessions(mode)
        label = "neither dropped" if mode == "alone" else f"dropped by {mode}"
        print(f"two busy sessions on one CPU, {label:24s}: {a:.2f} s and {b:.2f} s of CPU in 3 s, "
              f"ratio {a / max(b, 0.01):.1f} (load {os.getloadavg()[0]:.2f})", flush=True)
    medians = {}
    for mode in ("alone", "thread nice", "autogroup"):
        times = measure(problem, mode, args.reps)
        medians[mode] = statistics.median(times)
        print(f"{mode:12s} median {medians[mode]:.3f} s  runs: {' '.join(f'{t:.3f}' for t in times)}  "
              f"(load {os.getloadavg()[0]:.2f})", flush=True)
    for mode in ("thread nice", "autogroup"):
        print(f"ratio to alone, hog dropped by {mode}: {medians[mode] / medians['alone']:.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
