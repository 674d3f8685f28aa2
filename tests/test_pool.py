"""The warm pool: it grades like a cold run, each worker serves one run, it refills, queues in order,
keeps a slow run from blocking others, and leaves no process behind. No timing assertions."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a contributor's quick run (-m "not slow") leaves these out

import problems
from grader.cli import main as cli_main
from grader.grading.grade import build_job, grade
from grader.records import Verdict
from grader.sandbox import bwrap, runner
from grader.sandbox import pool as pool_module
from grader.sandbox.forkserver import ForkServer
from grader.sandbox.outcome import Limits
from grader.sandbox.pool import LONG_RUN_GROUP_NICE, LONG_RUN_NICE, PoolBusy, PoolClosed
from grader.grading.workers import CHILD, shared_pool
from grader.grading.workers import worker_pool as WorkerPool

PROBLEM = problems.get("rematerialized-mlp-block")

SLOW = """
import time
time.sleep(4)
def remat_mlp_block(params, x, y):
    return {}
"""

SPIN = """
def remat_mlp_block(params, x, y):
    while True:
        pass
"""


def _job(code: str) -> dict:
    return build_job(PROBLEM, code, examples_only=True)


def _wait_until(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def _my_children() -> set[int]:
    """Live (or zombie) processes descended from this test process that run the grader's child or its fork
    server (forked workers keep the server's command line)."""
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                commands[int(entry)] = f.read()
        except (OSError, ValueError, IndexError):
            continue
    mine, todo = set(), [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in mine:
                mine.add(pid)
                todo.append(pid)
    return {pid for pid in mine if b"entry.py" in commands.get(pid, b"")}


MODES = {"fork server": "1", "new processes": "0"}


@pytest.fixture(params=list(MODES))
def mode(request, monkeypatch):
    """Workers forked by the fork server (the default), or each started as a new process (its fallback)."""
    monkeypatch.setenv("JAXPLAY_FORKSERVER", MODES[request.param])
    return request.param


@pytest.fixture
def pool():
    p = WorkerPool(size=2, warm=2)
    yield p
    p.shutdown()


def test_pool_grades_like_a_cold_run(mode, pool):
    good = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=pool.run)
    assert good.verdict is Verdict.ACCEPTED, good.message
    bad = grade(PROBLEM, PROBLEM.starter, examples_only=True, run=pool.run)
    cold = grade(PROBLEM, PROBLEM.starter, examples_only=True)
    assert bad.verdict is cold.verdict and bad.verdict is not Verdict.ACCEPTED, (bad.message, cold.message)
    assert bad.message == cold.message


def test_nothing_carries_over_between_runs(mode, monkeypatch):
    leaver = """
import builtins, ctypes, os, sys, jax
print("pid", os.getpid())
builtins.LEFT_BEHIND = 1
jax.LEFT_BEHIND = 1
os.environ["LEFT_BEHIND"] = "1"
sys.modules["left_behind"] = sys
open("left_behind.txt", "w").write("x")
open(os.path.join(os.environ["HOME"], "left_in_home.txt"), "w").write("x")
for target in ("../left_in_root.txt", "/tmp/left_in_tmp.txt"):
    try:
        open(target, "w").write("x")
        print("wrote", target)
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
print("shmget", libc.shmget(0x6a617870, 4096, 0o1666))  # IPC_CREAT | 0666: would outlive this process
import time
time.sleep(1.5)  # the next worker is ready before this run answers: only the held slot keeps it waiting
def remat_mlp_block(params, x, y):
    return {}
"""
    looker = """
import builtins, ctypes, os, sys, jax

print("pid", os.getpid())
libc = ctypes.CDLL(None, use_errno=True)
print("seen", [hasattr(builtins, "LEFT_BEHIND"), hasattr(jax, "LEFT_BEHIND"), "LEFT_BEHIND" in os.environ,
               "left_behind" in sys.modules, os.listdir("."), os.listdir(os.environ["HOME"]),
               os.path.exists("../left_in_root.txt"), os.path.exists("/tmp/left_in_tmp.txt"),
               libc.shmget(0x6a617870, 0, 0) >= 0])
def remat_mlp_block(params, x, y):
    return {}
"""
    workers, beside = [], []
    real_supervise = pool_module.supervise

    def supervise(child, *args, **kwargs):  # notes any earlier worker still there when a run starts
        beside.extend(proc for proc in workers if proc.poll() is None)
        workers.append(child.proc)
        return real_supervise(child, *args, **kwargs)

    monkeypatch.setattr(pool_module, "supervise", supervise)
    # long_after_s: the leaver's 1.5 s sleep must not make it a long run, which holds no slot
    with WorkerPool(size=1, warm=1, long_after_s=3.0) as one:
        first = one.run(_job(leaver))
        # the answer comes back while the worker still exits; its slot (the only one) is held until it has
        # gone, so the second run cannot start beside it
        second = one.run(_job(looker))
        spawned = one.stats().spawned
        forked = one._forkserver is not None
    assert forked == (mode == "fork server")
    assert first.result and first.result["status"] == "ok", first
    assert "wrote" not in first.stdout, first.stdout
    assert "shmget -1" in first.stdout, first.stdout  # System V IPC is refused
    assert "seen [False, False, False, False, [], [], False, False, False]" in second.stdout, second.stdout
    assert spawned >= 2  # a fresh worker each time (pids can repeat: each worker has its own pid namespace)
    assert len(workers) == 2 and workers[0] is not workers[1]
    assert not beside, "the second run started while the first worker was still there"


def test_a_worker_warms_up_only_while_no_run_waits(monkeypatch):
    """A worker started while nobody waits does the payload's warm-up job before it says it is ready (its
    first compile is then not on a learner's clock); one started for a queue of runs skips it."""
    asked = []
    real_spawn = ForkServer.spawn

    def spawn(self, *args, warm_up=False, **kwargs):
        asked.append(warm_up)
        return real_spawn(self, *args, warm_up=warm_up, **kwargs)

    monkeypatch.setattr(ForkServer, "spawn", spawn)
    quick = "def remat_mlp_block(params, x, y):\n    return {}\n"
    with WorkerPool(size=1, warm=1) as one:
        assert one.wait_ready() and asked == [True]
        outcomes = []
        runs = [threading.Thread(target=lambda code=code: outcomes.append(one.run(_job(code))))
                for code in (SLOW, quick, quick)]
        for thread in runs:
            thread.start()
            _wait_until(lambda: one.stats().running + one.stats().queued == len(outcomes) + runs.index(thread) + 1)
        for thread in runs:
            thread.join(timeout=60)
        assert one.wait_ready()
    assert len(outcomes) == 3 and all(o.result and o.result["status"] == "ok" for o in outcomes), outcomes
    assert False in asked[1:], "workers started for waiting runs skip the warm-up"
    assert asked[-1] is True, "the worker started once the queue is empty warms up"


def test_the_warm_up_job_runs_cleanly_and_leaves_nothing_behind():
    import importlib.util
    import linecache
    spec = importlib.util.spec_from_file_location("jaxplay_child_for_warm_up", Path(__file__).resolve().parents[1] / "grader" / "learner" / "child.py")
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    tools = child.start_jax()
    child.warm_up(tools)
    assert "solution" not in sys.modules and child.SOLUTION_FILE not in linecache.cache
    result = child.run_job(tools, _job(PROBLEM.reference))
    assert result["status"] == "ok" and all(case["status"] == "ok" for case in result["cases"]), result


@pytest.mark.parametrize("verifier", ["1", "0"], ids=["verifier", "no verifier"])
def test_the_fork_server_traces_the_warm_up_before_it_forks_and_starts_no_backend(verifier):
    """``prepare_forks`` runs in the fork server before any fork (``inside/zygote.py``): it must leave no JAX
    backend and no thread behind (a fork copies one thread only), nothing of the warm-up job's module, and the
    traces made (jnp's operators are jitted functions: their traces, kept by JAX, are what a worker inherits);
    without the verifier too, where a worker's own warm-up compiles."""
    script = textwrap.dedent(f"""
        import importlib.util, linecache, sys, threading
        spec = importlib.util.spec_from_file_location("jaxplay_child_fork", {str(CHILD)!r})
        child = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(child)
        t = child.import_jax()
        from jax._src import pjit, xla_bridge
        before = pjit._infer_params_cached.cache_info().currsize
        child.prepare_forks(t)
        print(len(xla_bridge._backends), threading.active_count(), "solution" in sys.modules,
              child.SOLUTION_FILE in linecache.cache, pjit._infer_params_cached.cache_info().currsize > before + 50)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, JAX_PLATFORMS="cpu", JAXPLAY_VERIFIER=verifier))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0", "1", "False", "False", "True"], out.stdout


def test_pool_refills_after_each_run(pool):
    assert pool.wait_ready()
    before = pool.stats().spawned
    for _ in range(3):
        grade(PROBLEM, PROBLEM.reference, examples_only=True, run=pool.run)
    assert pool.wait_ready()
    assert pool.stats().spawned == before + 3


def test_a_dead_idle_worker_is_replaced(pool):
    assert pool.wait_ready()
    proc = pool._ready[0].child.proc
    victim = proc.pid
    os.killpg(victim, 9)
    _wait_until(lambda: proc.poll() is not None)  # dead before the run comes, as when the OOM killer struck
    report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=pool.run)
    assert report.verdict is Verdict.ACCEPTED, report.message
    assert pool.wait_ready()
    assert victim not in {w.child.proc.pid for w in pool._ready}


def test_a_worker_that_fails_to_start_is_retried(monkeypatch):
    monkeypatch.setenv("JAXPLAY_FORKSERVER", "0")
    real = runner.child_command
    calls = []

    def flaky(payload, *fds_and_scratch):
        calls.append(1)
        if len(calls) == 1:
            return ["/bin/sh", "-c", "exit 3"]
        return real(payload, *fds_and_scratch)

    monkeypatch.setattr(runner, "child_command", flaky)
    with WorkerPool(size=1, warm=1) as p:
        report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=p.run)
        assert p.stats().failed_starts == 1
    assert report.verdict is Verdict.ACCEPTED, report.message


def test_a_forked_worker_that_dies_before_it_is_ready_is_retried(monkeypatch):
    real = ForkServer.spawn
    calls = []

    def flaky(self, *args, **kwargs):
        child = real(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            os.killpg(child.proc.pid, 9)
        return child

    monkeypatch.setattr(ForkServer, "spawn", flaky)
    with WorkerPool(size=1, warm=1) as p:
        report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=p.run)
        assert p.stats().failed_starts == 1
    assert report.verdict is Verdict.ACCEPTED, report.message


def test_a_dead_fork_server_is_restarted():
    with WorkerPool(size=1, warm=1) as p:
        assert p.wait_ready()
        first_server = p._forkserver
        os.killpg(first_server.proc.pid, 9)  # its ready worker dies with it
        _wait_until(lambda: first_server.lost)
        report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=p.run)
        assert report.verdict is Verdict.ACCEPTED, report.message
        assert p._forkserver is not first_server and not p._forkserver.lost


def test_a_fork_server_hands_over_after_its_quota(monkeypatch):
    monkeypatch.setattr(pool_module, "FORKSERVER_FORKS", 2)
    with WorkerPool(size=1, warm=1) as p:
        servers = []
        for _ in range(4):
            report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=p.run)
            assert report.verdict is Verdict.ACCEPTED, report.message
            assert p.wait_ready()  # the refill has been forked (by a new server, when one took over)
            servers.append(p._forkserver)
        assert all(s.forks <= 2 for s in servers)
        assert servers[0] is not servers[-1]
        _wait_until(lambda: servers[0].lost)  # stopped once its last worker was done
        assert not p._forkserver.lost


def test_without_a_fork_server_each_worker_is_a_new_process(monkeypatch, capsys):
    real = bwrap.command

    def broken_server(mode, *args, **kwargs):
        if mode == "forkserver":
            return [sys.executable, "-c", "raise SystemExit(3)"]
        return real(mode, *args, **kwargs)

    monkeypatch.setattr(bwrap, "command", broken_server)
    failures = pool_module.FORKSERVER_FAILURES
    with WorkerPool(size=1, warm=1) as p:
        for _ in range(failures):
            report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=p.run)
            assert report.verdict is Verdict.ACCEPTED, report.message  # each worker a new process meanwhile
        assert p.wait_ready()
        assert p._forkserver is None and not p._use_forkserver
    err = capsys.readouterr().err
    assert err.count("the fork server failed") == failures, err
    assert "from now on" in err


def test_queue_positions_are_reported_in_order():
    with WorkerPool(size=1, warm=1) as p:
        seen: dict[str, list[int]] = {"b": [], "c": []}
        threads = [threading.Thread(target=p.run, args=(_job(SLOW),))]
        threads[0].start()
        _wait_until(lambda: p.stats().running == 1)
        for name, queued in (("b", 1), ("c", 2)):
            t = threading.Thread(target=p.run, args=(_job(PROBLEM.reference),),
                                 kwargs={"on_position": seen[name].append})
            t.start()
            threads.append(t)
            _wait_until(lambda: p.stats().queued == queued)
        for t in threads:
            t.join()
    assert seen["b"] == [0]
    assert seen["c"] == [1, 0]


def test_the_queue_is_bounded():
    with WorkerPool(size=1, warm=1, max_queue=1) as p:
        running = threading.Thread(target=p.run, args=(_job(SLOW),))
        running.start()
        _wait_until(lambda: p.stats().running == 1)
        waiting = threading.Thread(target=p.run, args=(_job(SLOW),))
        waiting.start()
        _wait_until(lambda: p.stats().queued == 1)
        with pytest.raises(PoolBusy):
            p.run(_job(PROBLEM.reference))
        running.join()
        waiting.join()


def test_a_time_limit_run_does_not_block_others():
    """Even with one slot: a run past long_after_s gives up its slot and its CPU priority."""
    outcome: dict[str, object] = {}
    pool = WorkerPool(size=1, warm=1, long_after_s=1.0)

    def spin() -> None:
        try:
            outcome["spin"] = pool.run(_job(SPIN), Limits(wall_s=120))
        except PoolClosed as exc:
            outcome["spin"] = exc

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        _wait_until(lambda: pool.stats().long_running == 1)
        spinning = next(iter(pool._running))
        assert os.getpriority(os.PRIO_PROCESS, spinning) == LONG_RUN_NICE
        worker = _sandboxed_python(spinning)
        tids = os.listdir(f"/proc/{worker}/task")
        assert len(tids) > 1 and all(os.getpriority(os.PRIO_PROCESS, int(t)) == LONG_RUN_NICE for t in tids)
        if Path("/proc/self/autogroup").exists():  # the nice of the worker's session counts against other sessions
            group, _, niceness = Path(f"/proc/{worker}/autogroup").read_text().split()
            assert int(niceness) == LONG_RUN_GROUP_NICE
            # The grader's own session is untouched. A process in the kernel's default group (never in a session
            # of its own, as under CI's container) reads an empty file: no autogroup of its own to change.
            own = Path("/proc/self/autogroup").read_text().split()
            if own:
                assert group != own[0] and int(own[2]) != LONG_RUN_GROUP_NICE
        report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=pool.run)
        assert report.verdict is Verdict.ACCEPTED, report.message
        assert spinner.is_alive()  # still spinning while the other run got its verdict
    finally:
        pool.shutdown()  # a failed check must not leave the spinning worker to the tests after this one
        spinner.join()
    assert isinstance(outcome["spin"], PoolClosed)


def _sandboxed_python(root: int) -> int:
    """The process running ``entry.py`` in ``root``'s tree (``root`` itself for a forked worker; under
    bubblewrap in a new process, its grandchild)."""
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            if b"entry.py" in Path(f"/proc/{pid}/cmdline").read_bytes() and int(
                    Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[3]) == pid:
                return pid  # the session leader: bubblewrap's own processes keep the command line too
            todo += [int(c) for t in os.listdir(f"/proc/{pid}/task")
                     for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
        except OSError:
            continue
    return root


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_the_priority_drop_counts_across_sessions():
    """Two busy processes, each in a session of its own (as every worker is), pinned to one CPU: the one the
    pool drops gets clearly less CPU time, whatever ``kernel.sched_autogroup_enabled`` says (a measurement:
    the bar is a half, where the kernel's weights for the session's nice 0 and 5 give about a third)."""
    cpu = min(os.sched_getaffinity(0))
    busy = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass\n"
    a, b = (subprocess.Popen([sys.executable, "-c", busy], start_new_session=True) for _ in range(2))
    try:
        time.sleep(0.2)
        assert (pool_module._lower_priority(b.pid, LONG_RUN_NICE, LONG_RUN_GROUP_NICE)
                or not Path("/proc/self/autogroup").exists())
        start = _cpu_s(a.pid), _cpu_s(b.pid)
        deadline = time.monotonic() + 20
        while _cpu_s(a.pid) - start[0] < 1.0 and time.monotonic() < deadline:  # 2 s of wall time, or more
            time.sleep(0.1)                                                     # on a loaded machine
        used_a, used_b = _cpu_s(a.pid) - start[0], _cpu_s(b.pid) - start[1]
        assert used_a >= 0.3, (used_a, used_b)
        assert used_a > 2 * used_b, f"dropped {used_b:.2f} s against {used_a:.2f} s"
    finally:
        for p in (a, b):
            p.kill()
            p.wait()


def test_the_time_limit_is_enforced_in_the_pool(pool):
    report = grade(PROBLEM, SPIN, examples_only=True, run=pool.run, limits=Limits(wall_s=2))
    assert report.verdict is Verdict.TIME_LIMIT, report.message


def test_shutdown_leaves_no_processes(mode):
    p = WorkerPool(size=2, warm=2)
    assert p.wait_ready()
    grade(PROBLEM, PROBLEM.reference, examples_only=True, run=p.run)
    pids = _my_children()
    assert pids  # the refilled workers
    p.shutdown()
    assert not _my_children()
    # bubblewrap's own init may linger a moment as a zombie of the machine's init, which reaps it
    _wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), timeout=10)
    with pytest.raises(PoolClosed):
        p.run(_job(PROBLEM.reference))


def test_the_batch_command_line_shares_one_pool(tmp_path, capsys):
    files = []
    for i in range(3):
        f = tmp_path / f"s{i}.py"
        f.write_text(PROBLEM.reference if i != 1 else PROBLEM.starter)
        files.append(str(f))
    status = cli_main(["check", PROBLEM.slug, *files, "--examples-only", "--json"])
    out = capsys.readouterr().out
    assert status == 1
    assert out.count('"verdict": "accepted"') == 2
    assert not _my_children()


def test_the_app_gets_one_shared_pool():
    first = shared_pool()
    try:
        assert shared_pool() is first
        report = grade(PROBLEM, PROBLEM.reference, examples_only=True, run=first.run)
        assert report.verdict is Verdict.ACCEPTED, report.message
    finally:
        first.shutdown()
    second = shared_pool()
    try:
        assert second is not first  # a shut-down pool is replaced, not handed out
    finally:
        second.shutdown()
    assert not _my_children()


def test_a_run_is_dropped_by_its_own_time_not_by_its_wait_for_a_cpu(monkeypatch):
    """In a class's burst a right answer can wait seconds for a CPU: that wait is not its own time, so it keeps
    its slot (first come, first served) until the cap; a run that had the CPU, or slept, is dropped on time.
    (Timers never fire early; only lower bounds are asserted, and the cap against a run never dropped.)"""
    def first_fire(after_s: float, waited) -> float:
        started = time.monotonic()
        monkeypatch.setattr(pool_module, "_cpu_wait_s", lambda pid: waited(time.monotonic() - started))
        fired: list[float] = []
        timer = pool_module._OwnTimeTimer(os.getpid(), after_s, lambda: fired.append(time.monotonic() - started))
        deadline = started + 30
        while not fired and time.monotonic() < deadline:
            time.sleep(0.02)
        timer.cancel()
        assert len(fired) == 1
        return fired[0]

    cap = pool_module.OWN_TIME_CAP * 0.3
    assert first_fire(0.3, lambda elapsed: elapsed) >= cap  # waited for a CPU all along: only the cap drops it
    assert first_fire(0.3, lambda elapsed: min(elapsed, 0.5)) >= 0.8  # waited its first half second, then ran
    own = first_fire(0.3, lambda elapsed: 0.0)  # never waited: its own time is the wall clock's
    assert 0.3 <= own < cap

    fired: list[float] = []
    cancelled = pool_module._OwnTimeTimer(os.getpid(), 0.2, lambda: fired.append(1.0))
    cancelled.cancel()
    time.sleep(0.4)
    assert fired == []


def test_the_wait_for_a_cpu_is_read_from_the_kernel():
    """``run_delay`` of this process's threads: a number of seconds, growing, never negative."""
    first = pool_module._cpu_wait_s(os.getpid())
    assert first is not None and first >= 0.0
    assert pool_module._cpu_wait_s(os.getpid()) >= first
    assert pool_module._cpu_wait_s(2 ** 22 + 7) is None  # no such process
