"""Classroom load: 30 Runs arriving at once (right, wrong and time-limit ones) through the app's path.

The load runs inside a Streamlit server process, on threads, through ``shared_pool()`` and ``grade`` as the
app's sessions do. The page is a stand-in (``benchmarks/standin_app.py``, started with ``streamlit run``):
the app has no button that starts 30 runs at once, so one headless Chromium visit to the stand-in does, and
the browser is closed before they begin. From outside the server this script polls ``/_stcore/health`` every 100 ms
and samples the memory of the server and all its workers (RSS and PSS, summed) every 200 ms.

    python benchmarks/classroom.py [--wall 30] [--size N --warm N] [--count 30]
    python benchmarks/classroom.py --distinct [--wall 30]   # 30 different programs, as a class writes them
    python benchmarks/classroom.py --queue [--wall 30] [--count 30]   # classroom_queue.py: Redis, two workers

Reports: every verdict against the expected one, none lost, time to the last verdict, the health endpoint's
slowest answer, and peak memory.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]

GA, REMAT = "gradient-accumulation-with-scan", "rematerialized-mlp-block"

GA_WRONG = """
import jax, jax.numpy as jnp
def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.sum((h @ params["w2"] + params["b2"] - y) ** 2)   # not divided by the rows
def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1]); ys = y.reshape(num_microbatches, -1, y.shape[1])
    def step(carry, batch):
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return (carry[0] + loss, jax.tree.map(jnp.add, carry[1], grads)), None
    zeros = jax.tree.map(jnp.zeros_like, params)
    (l, g), _ = jax.lax.scan(step, (jnp.float32(0.0), zeros), (xs, ys))
    return {"loss": l / num_microbatches, "grads": jax.tree.map(lambda v: v / num_microbatches, g)}
"""

GA_PYTHON_LOOP = """
import jax, jax.numpy as jnp
def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.sum((h @ params["w2"] + params["b2"] - y) ** 2) / x.shape[0]
def grad_accumulation(params, x, y, num_microbatches):
    s = x.shape[0] // num_microbatches
    loss, grads = 0.0, jax.tree.map(jnp.zeros_like, params)
    for i in range(num_microbatches):   # a Python loop, not a scan
        l, g = jax.value_and_grad(_loss)(params, x[i*s:(i+1)*s], y[i*s:(i+1)*s])
        loss, grads = loss + l, jax.tree.map(jnp.add, grads, g)
    return {"loss": loss / num_microbatches, "grads": jax.tree.map(lambda v: v / num_microbatches, grads)}
"""

REMAT_NO_CHECKPOINT = """
import jax, jax.numpy as jnp
def remat_mlp_block(params, x, y):
    def loss_fn(p):
        out = x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return jnp.mean((out - y) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}
"""

SPIN = """
def {entry}(*args):
    while True:
        pass
"""


def tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds so far of each kind of process under the server (``profile_run._tree_cpu``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from profile_run import _tree_cpu
    return _tree_cpu(root)


def submissions(count: int) -> list[dict]:
    """A class's mix: about half right, the rest wrong answers, unmet requirements, crashes and spins."""
    import problems
    ga, remat = problems.get(GA), problems.get(REMAT)
    kinds = [
        (GA, ga.reference, "accepted"), (REMAT, remat.reference, "accepted"),
        (GA, GA_WRONG, "wrong_answer"), (REMAT, remat.reference, "accepted"),
        (GA, GA_PYTHON_LOOP, "requirements_not_met"), (REMAT, REMAT_NO_CHECKPOINT, "requirements_not_met"),
        (GA, ga.reference, "accepted"), (REMAT, remat.starter, "runtime_error"),
        (GA, SPIN.format(entry=ga.entry), "time_limit"), (REMAT, remat.reference, "accepted"),
    ]
    return [{"i": i, "slug": kinds[i % len(kinds)][0], "code": kinds[i % len(kinds)][1],
             "expected": kinds[i % len(kinds)][2]} for i in range(count)]


SPINS = [  # three different endless loops: Python, a traced while_loop that never ends, a loop in the tracer
    """
def {entry}(*args):
    while True:
        pass
""", """
import jax, jax.numpy as jnp
def {entry}(*args):
    return jax.lax.while_loop(lambda c: c >= 0, lambda c: c + 1, jnp.int32(0))
""", """
import itertools
def {entry}(*args):
    total = 0
    for i in itertools.count():
        total += i * i
    return total
"""]

RAISES = [  # three different runtime errors
    None,  # the starter (its NotImplementedError)
    """
import jax.numpy as jnp
def {entry}(params, x, *rest):
    return jnp.dot(x, x)   # (B, D) @ (B, D): the shapes do not line up
""", """
def {entry}(params, *rest):
    return params["w3"]   # no such key
"""]

WRONG_ON_EXAMPLES = [  # wrong answers the three examples already catch (a Run grades the examples only)
    (GA, "wrong_answer/mean_over_outputs_too.py"), (GA, "wrong_answer/sums_instead_of_averaging.py"),
    (REMAT, "wrong_answer/mean_over_batch_only.py")]


def distinct_submissions(count: int = 30) -> list[dict]:
    """A class's Runs as a class writes them (issue 44): every program different. Right answers in the
    galleries' many styles, unmet requirements, wrong answers the examples catch, three different crashes and
    three different endless loops, on the two problems of the repeated mix, in about its proportions."""
    import problems
    ga, remat = problems.get(GA), problems.get(REMAT)

    def files(problem, *subs):
        return [f for sub in subs for f in sorted((problem.folder / "submissions" / sub).glob("**/*.py"))]

    def mix(a: list, b: list) -> list:
        return [x for pair in zip(a, b) for x in pair] + a[len(b):] + b[len(a):]

    accepted = mix([(GA, f) for f in files(ga, "accepted")], [(REMAT, f) for f in files(remat, "accepted")])
    unmet = mix([(GA, f) for f in files(ga, "requirements_not_met", "fails")],
                [(REMAT, f) for f in files(remat, "requirements_not_met", "fails")])
    subs = [(slug, f.read_text(), "accepted") for slug, f in accepted[:15]]
    subs += [(slug, f.read_text(), "requirements_not_met") for slug, f in unmet[:6]]
    subs += [(slug, (problems.get(slug).folder / "submissions" / name).read_text(), "wrong_answer")
             for slug, name in WRONG_ON_EXAMPLES]
    for slug, code in zip((REMAT, GA, REMAT), RAISES):
        problem = problems.get(slug)
        subs.append((slug, problem.starter if code is None else code.format(entry=problem.entry), "runtime_error"))
    for slug, code in zip((GA, REMAT, GA), SPINS):
        subs.append((slug, code.format(entry=problems.get(slug).entry), "time_limit"))
    assert len({code for _, code, _ in subs}) == len(subs), "every program different"
    # interleaved as a class sends them: the loops and crashes among the rest, not at the end
    order = sorted(range(len(subs)), key=lambda i: (i * 7) % len(subs))
    picked = [subs[i] for i in order][:count]
    return [{"i": i, "slug": slug, "code": code, "expected": expected}
            for i, (slug, code, expected) in enumerate(picked)]


class _StageClock:
    """Wall time of each stage of the calling thread's Run: the child (its wait for a worker included), the
    verifier, the checks; wraps the functions ``grade`` calls, per thread."""

    def __init__(self) -> None:
        from grader.grading import checker
        from grader.verifier import service
        self.local = threading.local()
        for module, name, label in ((service, "verified", "verifier"), (checker, "run_checks", "checks")):
            fn = getattr(module, name)
            setattr(module, name, self._wrap(fn, label))

    def _wrap(self, fn, label):
        def wrapper(*args, **kwargs):
            with self.timed(label):
                return fn(*args, **kwargs)
        return wrapper

    @contextlib.contextmanager
    def timed(self, label: str):
        started = time.monotonic()
        try:
            yield
        finally:
            times = self.local.__dict__.setdefault("times", {})
            times[label] = times.get(label, 0.0) + time.monotonic() - started

    def mine(self) -> dict[str, float]:
        return {k: round(v, 2) for k, v in self.local.__dict__.get("times", {}).items()}


def run_load(out_path: str, count: int, wall_s: float) -> None:
    """Inside the server: wait for a warm pool, then start ``count`` runs at once on threads."""
    import problems
    from grader.grading.grade import grade
    from grader.sandbox import Limits
    from grader.grading.workers import shared_pool

    pool = shared_pool()
    pool.wait_ready(timeout=120)
    subs = distinct_submissions(count) if os.environ.get("CLASSROOM_DISTINCT") else submissions(count)
    for s in subs:
        problems.get(s["slug"]).examples  # loaded before the clock starts, as the app has them
    results: list[dict] = []
    lock = threading.Lock()
    gate = threading.Event()
    start: list[float] = []
    stages = _StageClock()

    def one(s: dict) -> None:
        gate.wait()
        positions: list[int] = []

        def run(job, limits):
            with stages.timed("child"):
                return pool.run(job, limits, on_position=positions.append)
        try:
            report = grade(problems.get(s["slug"]), s["code"], examples_only=True, limits=Limits(wall_s=wall_s),
                           run=run)
            got, message = report.verdict.value, report.message
        except Exception as exc:  # noqa: BLE001 - a lost run is what this benchmark looks for
            got, message = "lost", repr(exc)
        with lock:
            results.append({"i": s["i"], "expected": s["expected"], "got": got, "message": message[:200],
                            "done_s": time.monotonic() - start[0], "first_position": positions[:1],
                            "stages": stages.mine()})

    threads = [threading.Thread(target=one, args=(s,), daemon=True) for s in subs]
    for t in threads:
        t.start()
    Path(out_path).write_text(json.dumps({"phase": "started", "pool": pool.stats().__dict__}))
    start.append(time.monotonic())
    gate.set()
    for t in threads:
        t.join()
    Path(out_path).write_text(json.dumps({"phase": "done", "results": results, "pool": pool.stats().__dict__}))


# -- the driver, outside the server -------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree_memory(root_pid: int) -> tuple[int, int, int]:
    """(RSS sum, PSS sum, process count) of ``root_pid`` and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    rss = pss = n = 0
    todo = [root_pid]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
            n += 1
        except OSError:
            pass
    return rss, pss, n


def health_ms(url: str) -> float:
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            r.read()
    except Exception:  # noqa: BLE001 - a failed answer counts as a slow one
        return 5000.0
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--wall", type=float, default=30.0, help="the time limit of a Run, seconds")
    parser.add_argument("--size", type=int, help="JAXPLAY_POOL_SIZE for the server (default: its own)")
    parser.add_argument("--warm", type=int, help="JAXPLAY_POOL_WARM for the server")
    parser.add_argument("--distinct", action="store_true", help="every Run a different program (issue 44): "
                        "the galleries' right answers, unmet requirements and wrong answers, different loops")
    parser.add_argument("--queue", action="store_true", help="the same Runs through Redis and two local grading "
                        "worker processes, beside the local pool: the queue's overhead per job")
    args = parser.parse_args()
    if args.queue:
        sys.path.insert(0, str(ROOT))
        from benchmarks.classroom_queue import main as queue_mode
        queue_mode(args.count, args.wall)
        return

    app = ROOT / "app.py" / "streamlit_app.py"
    script = ROOT / "benchmarks" / "standin_app.py"
    if app.exists():
        print("note: app.py/streamlit_app.py exists, but the load still goes through the stand-in page (the app has no hook to "
              "start 30 runs at once); the pool and grade path are the same.")
    port = free_port()
    out = Path(tempfile.mkdtemp(prefix="classroom-")) / "out.json"
    env = dict(os.environ, CLASSROOM_OUT=str(out), CLASSROOM_COUNT=str(args.count), CLASSROOM_WALL=str(args.wall),
               PYTHONPATH=str(ROOT))
    if args.size:
        env["JAXPLAY_POOL_SIZE"] = str(args.size)
    if args.warm:
        env["JAXPLAY_POOL_WARM"] = str(args.warm)
    if args.distinct:
        env["CLASSROOM_DISTINCT"] = "1"
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
                               "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    health = f"http://127.0.0.1:{port}/_stcore/health"
    try:
        deadline = time.monotonic() + 60
        while health_ms(health) >= 5000:
            assert time.monotonic() < deadline and server.poll() is None, "streamlit did not start"
            time.sleep(0.2)
        idle_rss, idle_pss, _ = tree_memory(server.pid)

        from playwright.sync_api import sync_playwright
        with sync_playwright() as pw:  # one visit runs the page once, which starts the load
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_text("classroom load started").wait_for(timeout=180_000)
            browser.close()

        load0 = os.getloadavg()[0]
        cpu0 = tree_cpu(server.pid)
        samples: list[float] = []
        peak = [0, 0, 0]
        stop = threading.Event()

        def poll_health() -> None:
            while not stop.is_set():
                samples.append(health_ms(health))
                time.sleep(0.1)

        poller = threading.Thread(target=poll_health, daemon=True)
        poller.start()
        data: dict = {}
        cpu1: dict = {}
        deadline = time.monotonic() + 30 * 60
        while time.monotonic() < deadline:
            rss, pss, n = tree_memory(server.pid)
            peak = [max(peak[0], rss), max(peak[1], pss), max(peak[2], n)]
            try:
                data = json.loads(out.read_text())
            except (OSError, ValueError):
                data = {}
            if data.get("phase") == "done":
                cpu1 = tree_cpu(server.pid)
                break
            time.sleep(0.2)
        stop.set()
        poller.join()
        load1 = os.getloadavg()[0]
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()

    results = sorted(data.get("results", []), key=lambda r: r["i"])
    wrong = [r for r in results if r["got"] != r["expected"]]
    done = [r["done_s"] for r in results]
    gib = 2 ** 30
    print(f"load average {load0:.1f} at start, {load1:.1f} at end, on {os.cpu_count()} CPUs; "
          f"pool {data.get('pool')}; Run time limit {args.wall:g} s")
    print(f"runs: {len(results)} of {args.count} came back; verdicts right: {len(results) - len(wrong)}; "
          f"mix: {dict((k, sum(r['expected'] == k for r in results)) for k in sorted({r['expected'] for r in results}))}")
    for r in wrong:
        print(f"  WRONG run {r['i']}: expected {r['expected']}, got {r['got']}: {r['message']}")
    if done:
        normal = [r["done_s"] for r in results if r["expected"] != "time_limit"]
        print(f"time to last verdict {max(done):.1f} s; to the last non-time-limit verdict {max(normal):.1f} s; "
              f"median verdict {statistics.median(done):.1f} s")
        print(f"queue positions first reported: max {max((r['first_position'] or [0])[0] for r in results)}")
        print("verdicts in order (s): " + " ".join(f"{d:.1f}" for d in sorted(done)))
        print("by kind, in the order sent: " + "; ".join(
            f"{kind} " + " ".join(f"{r['done_s']:.1f}" for r in results if r["expected"] == kind)
            for kind in sorted({r["expected"] for r in results})))
    timed = [r for r in results if r.get("stages") and r["expected"] != "time_limit"]
    if timed:
        labels = sorted({k for r in timed for k in r["stages"]})
        print("wall by stage, median over the non-time-limit Runs (s): " + ", ".join(
            f"{k} {statistics.median(r['stages'].get(k, 0.0) for r in timed):.2f}" for k in labels))
    if cpu1:
        spent = {k: cpu1.get(k, 0.0) - cpu0.get(k, 0.0) for k in cpu1}
        print(f"CPU over the load, {sum(spent.values()):.1f} s: " + ", ".join(
            f"{k} {v:.1f}" for k, v in sorted(spent.items(), key=lambda kv: -kv[1]) if v >= 0.05))
    over = sum(s > 1000 for s in samples)
    print(f"health endpoint: {len(samples)} polls, slowest {max(samples):.0f} ms, p50 {statistics.median(samples):.0f} ms, "
          f"{over} over 1 s")
    print(f"memory (server + workers): idle {idle_rss / gib:.2f} GiB RSS / {idle_pss / gib:.2f} GiB PSS; peak "
          f"{peak[0] / gib:.2f} GiB RSS / {peak[1] / gib:.2f} GiB PSS over {peak[2]} processes (target <= 3 GiB)")


if __name__ == "__main__":
    main()
