"""No learner can stop grading for others (issue 20): nothing a run leaves behind, and no failure of reaping,
cleaning up or releasing a slot, takes down the fork server, the pool or its manager; a run keeps its own
honest verdict; a fork server that dies is noticed and replaced, and the runs it had are told the grader
lost them, never that their program crashed.

Proved the general way (every cleanup step of the pool and of the fork server made to raise, hang or be
slow) and with the concrete attack (1,500 nested folders made while another learner's right answer is in
flight)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a contributor's quick run (-m "not slow") leaves these out

import problems
from grader.grading.grade import build_job, grade
from grader.records import Verdict
from grader.sandbox import pool as pool_module
from grader.sandbox.forkserver import ForkedProcess
from grader.sandbox.inside import attributes
from grader.sandbox.inside import zygote as zygote_module
from grader.grading.workers import worker_pool as WorkerPool

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = problems.get("rematerialized-mlp-block")
RIGHT = PROBLEM.reference
RIGHT_SLOWLY = "import time\ntime.sleep(3)\n" + PROBLEM.reference  # still in flight while the other run ends
DEEP_TREE = """
import os
for _ in range(1500):  # far deeper than shutil.rmtree's recursion can go, well under the entry cap
    os.mkdir("d")
    os.chdir("d")
def remat_mlp_block(params, x, y):
    return {}
"""


def _wait_until(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def _grade(pool, code: str):
    return grade(PROBLEM, code, examples_only=True, run=pool.run)


def test_every_cleanup_step_of_the_pool_can_fail_and_the_pool_serves_on(monkeypatch, capsys):
    """Removing a scratch folder raises, hangs or is slow; killing or waiting for a finished worker raises;
    the manager's own round raises: each run keeps its verdict, its slot is freed (a pool of one slot serves
    the next), and the manager thread lives."""
    real_remove, real_kill, real_wait = pool_module.remove_tree, pool_module._kill, ForkedProcess.wait
    hanging, slot_free_while_hanging = threading.Event(), []
    faults = {
        "remove raises": {"remove_tree": lambda path, **kw: (_ for _ in ()).throw(RecursionError("deep"))},
        "remove hangs": {"remove_tree": None},  # filled in below: it needs the pool
        "remove is slow": {"remove_tree": lambda path, **kw: (time.sleep(0.5), real_remove(path, **kw))[1]},
        "kill raises": {"_kill": lambda child: (real_kill(child), (_ for _ in ()).throw(OSError("kill")))},
        "wait raises": {"wait": lambda self, timeout=None: (_ for _ in ()).throw(RuntimeError("wait"))},
    }
    with WorkerPool(size=1, warm=1) as one:

        def hang(path, **kw):
            hanging.set()
            with one._cond:  # the slot of the worker whose folder this is (another run may hold the slot now)
                slot_free_while_hanging.append(all(c.scratch != path for c in one._running.values()))
            time.sleep(3)
            return real_remove(path, **kw)
        faults["remove hangs"]["remove_tree"] = hang
        for name, patches in faults.items():
            with monkeypatch.context() as m:
                for attr, fake in patches.items():
                    if attr == "wait":
                        m.setattr(ForkedProcess, "wait", fake)
                    else:
                        m.setattr(pool_module, attr, fake)
                report = _grade(one, RIGHT)
                assert report.verdict is Verdict.ACCEPTED, (name, report.message)
                wrong = _grade(one, PROBLEM.starter)  # the one slot was freed: the next run is served
                assert wrong.verdict not in (Verdict.ACCEPTED, Verdict.INTERNAL_ERROR), (name, wrong.message)
                _wait_until(lambda: not one._running, timeout=30)
            assert one._manager.is_alive(), name
        assert hanging.is_set() and slot_free_while_hanging and all(slot_free_while_hanging)

        calls = []
        real_poll = one._poll_starting

        def poll_fails_twice(timeout):
            calls.append(1)
            if len(calls) <= 2:
                raise MemoryError("a fault in the manager's round")
            return real_poll(timeout)
        monkeypatch.setattr(one, "_poll_starting", poll_fails_twice)
        _wait_until(lambda: len(calls) > 2, timeout=30)
        assert one._manager.is_alive()
        assert _grade(one, RIGHT).verdict is Verdict.ACCEPTED
    err = capsys.readouterr().err
    assert "serving on" in err and "RecursionError" in err and "MemoryError" in err


REAP_WITH_FAULTS = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from grader.sandbox.inside import cleanup, zygote



class Sock:
    sent = []

    def send(self, data):
        self.sent.append(json.loads(data))


def exited(code):
    pid = os.fork()
    if pid == 0:
        os._exit(code)
    while open("/proc/%d/stat" % pid).read().rsplit(") ", 1)[1][0] != "Z":
        time.sleep(0.01)
    return pid


def fail(*args, **kwargs):
    raise RecursionError("maximum recursion depth exceeded")


server = object.__new__(zygote.Zygote)
server.sock = Sock()
os.mkdir(sys.argv[2])
cleanup.remove_tree = fail
first = exited(3)
server.workers = {first: sys.argv[2]}
server.reap()
raised = [list(server.sock.sent), dict(server.workers)]
slow = []


class Left:
    complete = False

    def __str__(self):
        return "left"


def slowly(path, **kwargs):
    slow.append(Sock.sent[-1].get("exit"))  # the exit was said before the folder is touched
    time.sleep(0.3)
    return Left()


cleanup.remove_tree = slowly
second = exited(0)
server.workers = {second: sys.argv[2]}
server.reap()
print(json.dumps({"pids": [first, second], "raised": raised, "slow": [slow, server.sock.sent[-1]]}))
"""


def test_every_cleanup_step_of_the_fork_server_can_fail_and_it_serves_on(tmp_path):
    """The fork server's own side, in this process: its folder removal raises or is slow, reaping itself
    raises, a request is garbage. It reports each worker's exit first (the run's verdict waits for no
    cleanup), says what failed on stderr, and its serving loop goes on until the grader closes its end."""
    # reaping, in a process of its own (reaping takes any child: this one has others)
    done = subprocess.run([sys.executable, "-c", REAP_WITH_FAULTS, str(ROOT), str(tmp_path / "w1")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    first, second = seen["pids"]
    assert seen["raised"] == [[{"exit": first, "code": 3, "cpu": seen["raised"][0][0]["cpu"]}], {}]
    assert seen["slow"][0] == [second] and seen["slow"][1]["exit"] == second
    assert "removing" in done.stderr and "RecursionError" in done.stderr

    server = object.__new__(zygote_module.Zygote)
    # the loop itself: reaping raises, a request is garbage; it serves on until its socket closes
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.sock = theirs
    server.baseline = attributes.snapshot()
    server.wake_r, server.wake_w = os.pipe()
    server.workers = {}
    server.reap = lambda: (_ for _ in ()).throw(OSError("reaping failed"))
    done = []
    loop = threading.Thread(target=lambda: done.append(server.serve()), daemon=True)
    loop.start()
    assert json.loads(ours.recv(4096))["ready"]
    socket.send_fds(ours, [b"not json"], [])
    socket.send_fds(ours, [json.dumps({"fork": 7}).encode()], [])  # no descriptors: refused, not fatal
    answer = json.loads(ours.recv(4096))
    assert answer["error"] == 7 and "file descriptors" in answer["message"]
    time.sleep(1.2)  # a few rounds of the loop with reaping failing
    assert loop.is_alive()
    ours.close()
    loop.join(timeout=10)
    assert done == [None], "it returned (the grader closed its end), it did not raise"
    os.close(server.wake_r)
    os.close(server.wake_w)
    theirs.close()


def test_a_real_fork_server_whose_cleanup_steps_fail_serves_every_run(capfd):
    """A real fork server whose folder removal raises, hangs, is slow or raises again, in turn, and whose
    every third wait4 raises (``tests/payloads/faulty_cleanup.py`` does that to it): every run gets its own
    answer, several at once too, from the same fork server, which says on stderr what failed."""
    from grader.sandbox.outcome import Limits
    from grader.sandbox.pool import WorkerPool as PlainPool
    with PlainPool(ROOT / "tests" / "payloads" / "faulty_cleanup.py", size=2, warm=2) as two:
        assert two.wait_ready()
        server = two._forkserver
        answers: dict[int, object] = {}

        def run(n: int) -> None:
            result = two.run({"n": n}, Limits(wall_s=30)).result or {}
            answers[n] = (result.get("status"), result.get("n"))
        for batch in ((0,), (1, 2), (3,), (4, 5), (6, 7)):
            threads = [threading.Thread(target=run, args=(n,)) for n in batch]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
        assert answers == {n: ("ok", n) for n in range(8)}, answers
        assert two._forkserver is server and server.check(), "the same fork server served them all"
        _wait_until(lambda: not two._running, timeout=30)
    err = capfd.readouterr().err
    assert "fork server: removing" in err and "RecursionError" in err and "reaping failed" in err, err[-2000:]


def test_a_deep_tree_beside_a_right_answer_in_flight():
    """The attack of issue 20: 1,500 nested folders (``mkdir d; chdir d``) in the scratch folder. The other
    learner's right answer, in flight meanwhile on a worker of the same fork server, is accepted; the attacker
    gets its own verdict; the fork server survives and the next run is served."""
    with WorkerPool(size=2, warm=2) as two:
        assert two.wait_ready()
        server = two._forkserver
        got: dict[str, object] = {}
        other = threading.Thread(target=lambda: got.setdefault("other", _grade(two, RIGHT_SLOWLY)))
        other.start()
        _wait_until(lambda: two.stats().running == 1)
        got["attacker"] = _grade(two, DEEP_TREE)
        other.join(timeout=120)
        attacker, right = got["attacker"], got["other"]
        assert right.verdict is Verdict.ACCEPTED, right.message
        assert attacker.verdict is Verdict.WRONG_ANSWER, attacker.message
        assert server is two._forkserver and server.check(), "the fork server survived"
        assert _grade(two, RIGHT).verdict is Verdict.ACCEPTED
        _wait_until(lambda: not two._running, timeout=30)
        root = f"/proc/{server._server_pid}/root{server.root}"
        _wait_until(lambda: len(os.listdir(root)) <= 2 + two.stats().ready, timeout=30)  # the trees are gone


def test_a_dead_fork_server_is_noticed_and_its_runs_are_told_the_grader_lost_them():
    """Killed by its pid while a run is in flight: that run says the grading worker was lost (run again),
    not that the learner's program crashed; a new fork server serves within seconds."""
    with WorkerPool(size=1, warm=1) as one:
        assert one.wait_ready()
        first = one._forkserver
        got = []
        flight = threading.Thread(target=lambda: got.append(_grade(one, RIGHT_SLOWLY)))
        flight.start()
        _wait_until(lambda: one.stats().running == 1)
        time.sleep(0.5)
        os.kill(first._server_pid, 9)
        killed = time.monotonic()
        flight.join(timeout=60)
        report = got[0]
        assert report.verdict is Verdict.INTERNAL_ERROR, report.message
        assert "grading worker was lost" in report.message and "run again" in report.message
        assert "crashed" not in report.message
        _wait_until(lambda: one._forkserver is not None and one._forkserver is not first
                    and one._forkserver.check(), timeout=30)
        healed = time.monotonic() - killed
        assert _grade(one, RIGHT).verdict is Verdict.ACCEPTED
        assert first.lost
    assert healed < 30, healed
