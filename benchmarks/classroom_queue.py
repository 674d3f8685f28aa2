"""The classroom benchmark's queue mode (``python benchmarks/classroom.py --queue``): the same 30 Runs
through a Redis queue and two local ``python -m grader worker`` processes, beside the local pool.

On one machine the queue cannot be faster than the pool (the same cores grade, plus Redis and a second
process); what it costs is the point. Measured here, one Run at a time (nobody waits in line):

- ``local``: ``grade`` on a warm pool of two in this process, as the app without a queue;
- ``queue``: ``QueueRunner.grade`` with two worker processes of one warm worker each;

interleaved, so both see the same load (this machine is shared), and the overhead per job measured directly:
the client's wait for a job less the worker's own grading time (enqueue, dequeue, JSON, the result's read). Then the 30 Runs at once, both ways, with their
verdicts, median and last verdict time. Redis is started on a loopback port with a password.
"""
from __future__ import annotations

import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_at_a_time(grade_one: Callable[[dict], object], subs: list[dict], rounds: int) -> list[float]:
    times = []
    for i in range(rounds):
        s = subs[i % len(subs)]
        t0 = time.perf_counter()
        grade_one(s)
        times.append(time.perf_counter() - t0)
    return times


def _all_at_once(grade_one: Callable[[dict], str], subs: list[dict]) -> list[dict]:
    results: list[dict] = []
    lock, gate = threading.Lock(), threading.Event()
    start: list[float] = []

    def one(s: dict) -> None:
        gate.wait()
        try:
            got = grade_one(s)
        except Exception as exc:  # noqa: BLE001 - a lost run is what this looks for
            got = f"lost: {exc!r}"
        with lock:
            results.append({"expected": s["expected"], "got": got, "done_s": time.monotonic() - start[0]})

    threads = [threading.Thread(target=one, args=(s,), daemon=True) for s in subs]
    for t in threads:
        t.start()
    start.append(time.monotonic())
    gate.set()
    for t in threads:
        t.join()
    return results


def _summary(name: str, results: list[dict]) -> str:
    wrong = [r for r in results if r["got"] != r["expected"]]
    done = [r["done_s"] for r in results]
    normal = [r["done_s"] for r in results if r["expected"] != "time_limit"]
    return (f"{name}: {len(results)} Runs, verdicts right {len(results) - len(wrong)}; median verdict "
            f"{statistics.median(done):.1f} s, last non-time-limit {max(normal):.1f} s, last {max(done):.1f} s"
            + "".join(f"\n  WRONG: expected {r['expected']}, got {r['got']}" for r in wrong))


def main(count: int, wall_s: float, rounds: int = 12) -> None:
    import os

    import problems
    from benchmarks.classroom import submissions
    from grader.queue.client import QueueRunner
    from grader.grading.runners import PoolRunner
    from grader.sandbox import Limits
    from grader.grading.workers import worker_pool

    subs = submissions(count)
    quick = [s for s in subs if s["expected"] != "time_limit"][:6]
    limits = Limits(wall_s=wall_s)
    load0 = os.getloadavg()[0]

    folder = Path(tempfile.mkdtemp(prefix="classroom-redis-"))
    port, password = _free_port(), secrets.token_hex(16)
    redis = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind",
                              "127.0.0.1", "--requirepass", password, "--save", "", "--appendonly", "no",
                              "--dir", str(folder)], stdout=subprocess.DEVNULL)
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    workers = []
    local_times, queue_times, direct = [], [], []
    try:
        time.sleep(0.5)
        workers = [subprocess.Popen([sys.executable, "-m", "grader", "worker", "--queue", url, "--pool-size", "1"],
                                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                   for _ in range(2)]
        for w in workers:
            assert '"serving"' in w.stdout.readline(), "a worker did not start"
        queue = QueueRunner(url)
        with worker_pool(2, warm=2) as pool:
            pool.wait_ready(timeout=180)
            local = PoolRunner(pool)

            def grade_local(s: dict) -> str:
                return local.grade(problems.get(s["slug"]), s["code"], examples_only=True,
                                   limits=limits).verdict.value

            def grade_queued(s: dict) -> str:
                return queue.grade(problems.get(s["slug"]), s["code"], examples_only=True,
                                   limits=limits).verdict.value

            def submit_direct(s: dict) -> None:  # the client's wait less the worker's own grading time
                t0 = time.perf_counter()
                data = queue._submit("grader.queue.tasks.grade", {"slug": s["slug"], "code": s["code"],
                                                                   "examples_only": True, "wall_s": wall_s}, wall_s)
                direct.append(time.perf_counter() - t0 - data["elapsed_s"])
            for s in quick[:2]:  # the checks' helpers and JAX's caches warm on both sides
                grade_local(s), grade_queued(s)
            for i in range(rounds):  # interleaved, so both see the same load
                s = quick[i % len(quick)]
                local_times += _one_at_a_time(grade_local, [s], 1)
                queue_times += _one_at_a_time(grade_queued, [s], 1)
                submit_direct(s)
            load_mid = os.getloadavg()[0]
            local_burst = _all_at_once(grade_local, subs)
        queue_burst = _all_at_once(grade_queued, subs)
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(timeout=60)
        redis.terminate()
        redis.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    load1 = os.getloadavg()[0]

    ms = lambda xs: f"median {statistics.median(xs) * 1000:.0f} ms (min {min(xs) * 1000:.0f}, max {max(xs) * 1000:.0f})"
    print(f"load average {load0:.1f} at start, {load_mid:.1f} after the one-at-a-time Runs, {load1:.1f} at end, on "
          f"{os.cpu_count()} CPUs; Run time limit {wall_s:g} s")
    print(f"one Run at a time, interleaved, {rounds} Runs each: local pool {ms(local_times)}; queue {ms(queue_times)}")
    paired = [q - p for q, p in zip(queue_times, local_times)]
    print(f"queue overhead per job: {ms(direct)} (the client's wait less the worker's grading, {rounds} jobs); "
          f"paired queue - local {ms(paired)}; target under 50 ms")
    print(_summary("local pool of 2, all at once", local_burst))
    print(_summary("queue, two worker processes of 1, all at once", queue_burst))
