"""One learner cannot reach another's run, the fork server or the server (issue 11, findings 1, 2, 7, 8): each
layer on its own, with real processes. The attack suite (``test_attacks.py``) tries the same through the
command line, every layer together.

- seccomp refuses every call that acts on another process, and allows it toward the caller itself;
- as root, each worker is a user of its own with no capability, so the kernel refuses those calls too;
- a worker forked after a hostile one (or after anything changed the fork server) starts with the fork
  server's original priority, scheduling, affinity, I/O priority and limits;
- ``/proc`` shows a worker its own status, never the host's network, mounts or cgroup;
- bubblewrap works with Python in a virtual environment under ``/tmp``, and the doctor says plainly when
  bubblewrap is off.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox import bwrap
from grader.sandbox.forkserver import ForkServer
from grader.sandbox.outcome import Limits
from grader.sandbox.pool import WorkerPool
from grader.sandbox.runner import run_job, supervise

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "payloads" / "probe.py"
MODES = {"bwrap": "1", "no-bwrap": "0"}
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="a user per worker needs the grader to run as root")


@pytest.fixture(params=list(MODES))
def mode(request, monkeypatch):
    """With bubblewrap, and without it."""
    monkeypatch.setenv("JAXPLAY_BWRAP", MODES[request.param])
    bwrap.bwrap_works.cache_clear()
    if request.param == "bwrap" and not bwrap.use_bwrap():
        pytest.skip(f"bubblewrap does not work here: {bwrap.bwrap_works()[1]}")
    yield request.param
    bwrap.bwrap_works.cache_clear()


@pytest.fixture
def bystander():
    """A process of the grader's own user, standing for the server: nothing sandboxed may touch it."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc.pid
    proc.kill()
    proc.wait()


# -- seccomp on its own ------------------------------------------------------------------------------

SECCOMP_CALLS = r"""
import ctypes, errno, fcntl, json, os, resource, sys
sys.path.insert(0, sys.argv[2])
import entry
entry.load_package()
import importlib
importlib.import_module("jaxplay_inside.seccomp").install()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
other, me = int(sys.argv[1]), os.getpid()
tid = libc.syscall(186)  # gettid
r, w = os.pipe()
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
attr = ctypes.create_string_buffer(56)  # struct sched_attr, zeroed: SCHED_OTHER, nice 0
ctypes.memmove(attr, (56).to_bytes(4, "little"), 4)
nice, ioprio = os.getpriority(os.PRIO_PROCESS, 0), libc.syscall(252, 1, 0)
policy = os.sched_getscheduler(0)

def sys_(nr, *args):
    return lambda: libc.syscall(nr, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])

calls = {
    "prlimit64(other)": sys_(302, other, resource.RLIMIT_NOFILE, None, ctypes.byref(ctypes.create_string_buffer(16))),
    "prlimit64(self)": sys_(302, me, resource.RLIMIT_NOFILE, None, ctypes.byref(ctypes.create_string_buffer(16))),
    "prlimit64(0)": sys_(302, 0, resource.RLIMIT_NOFILE, None, ctypes.byref(ctypes.create_string_buffer(16))),
    "setpriority(other)": sys_(141, 0, other, nice),
    "setpriority(process group)": sys_(141, 1, 0, nice),
    "setpriority(user)": sys_(141, 2, 0, nice),
    "setpriority(self)": sys_(141, 0, 0, nice),
    "sched_setaffinity(other)": lambda: os.sched_setaffinity(other, os.sched_getaffinity(0)) or 0,
    "sched_setaffinity(self)": lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)) or 0,
    "sched_setscheduler(other)": lambda: os.sched_setscheduler(other, policy, os.sched_param(0)) or 0,
    "sched_setscheduler(self)": lambda: os.sched_setscheduler(0, policy, os.sched_param(0)) or 0,
    "sched_setparam(other)": lambda: os.sched_setparam(other, os.sched_param(0)) or 0,
    "sched_setattr(other)": sys_(314, other, attr, 0),
    "sched_setattr(self)": sys_(314, 0, attr, 0),
    "ioprio_set(other)": sys_(251, 1, other, ioprio),
    "ioprio_set(process group)": sys_(251, 2, 0, ioprio),
    "ioprio_set(self)": sys_(251, 1, 0, ioprio),
    "migrate_pages(other)": sys_(256, other, 64, None, None),
    "move_pages(other)": sys_(279, other, 0, None, None, None, 0),
    "kill(other)": sys_(62, other, 0),
    "kill(own process group)": sys_(62, 0, 0),
    "kill(everyone)": sys_(62, -1, 0),
    "kill(self)": sys_(62, me, 0),
    "tgkill(other)": sys_(234, other, other, 0),
    "tgkill(own thread)": sys_(234, me, tid, 0),
    "tkill(own thread)": sys_(200, tid, 0),
    "rt_sigqueueinfo(other)": sys_(129, other, 0, ctypes.create_string_buffer(128)),
    "pidfd_open(other)": sys_(434, other, 0),
    "pidfd_send_signal": sys_(424, 0, 0, None, 0),
    "pidfd_getfd": sys_(438, 0, 0, 0),
    "process_vm_readv(other)": sys_(310, other, iov, 1, iov, 1, 0),
    "process_vm_writev(other)": sys_(311, other, iov, 1, iov, 1, 0),
    "ptrace(seize other)": sys_(101, 0x4206, other, 0, 0),
    "fcntl(F_SETOWN other)": lambda: fcntl.fcntl(r, fcntl.F_SETOWN, other),
    "fcntl(F_SETOWN process group)": lambda: fcntl.fcntl(r, fcntl.F_SETOWN, -other),
    "fcntl(F_SETOWN_EX)": sys_(72, r, 15, ctypes.create_string_buffer(8)),
    "fcntl(F_SETOWN self)": lambda: fcntl.fcntl(r, fcntl.F_SETOWN, me),
}
out = {}
for name, call in calls.items():
    ctypes.set_errno(0)
    try:
        res = call()
        out[name] = ctypes.get_errno() if res == -1 else 0
    except OSError as exc:
        out[name] = exc.errno
print(json.dumps(out))
"""
REFUSED = ["prlimit64(other)", "setpriority(other)", "setpriority(process group)", "setpriority(user)",
           "sched_setaffinity(other)", "sched_setscheduler(other)", "sched_setparam(other)", "sched_setattr(other)",
           "ioprio_set(other)", "ioprio_set(process group)", "migrate_pages(other)", "move_pages(other)",
           "kill(other)", "kill(own process group)", "kill(everyone)", "tgkill(other)", "tkill(own thread)",
           "rt_sigqueueinfo(other)", "pidfd_open(other)", "pidfd_send_signal", "pidfd_getfd",
           "process_vm_readv(other)", "process_vm_writev(other)", "ptrace(seize other)", "fcntl(F_SETOWN other)",
           "fcntl(F_SETOWN process group)", "fcntl(F_SETOWN_EX)"]
ALLOWED = ["prlimit64(self)", "prlimit64(0)", "setpriority(self)", "sched_setaffinity(self)",
           "sched_setscheduler(self)", "sched_setattr(self)", "ioprio_set(self)", "kill(self)",
           "tgkill(own thread)", "fcntl(F_SETOWN self)"]


@pytest.fixture(scope="module")
def seccomp_answers():
    """What each call gave (0 or an errno) in a process of the grader's own user with only seccomp on,
    toward a process of that same user that nothing else would protect."""
    target = subprocess.Popen(["sleep", "300"])
    try:
        done = subprocess.run([sys.executable, "-c", SECCOMP_CALLS, str(target.pid),
                               str(ROOT / "grader" / "sandbox" / "inside")],
                              capture_output=True, text=True, timeout=120)
    finally:
        target.kill()
        target.wait()
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("call", REFUSED)
def test_seccomp_refuses_a_call_toward_another_process(seccomp_answers, call):
    assert seccomp_answers[call] == errno.EPERM, seccomp_answers[call]


@pytest.mark.parametrize("call", ALLOWED)
def test_seccomp_allows_the_same_call_toward_the_process_itself(seccomp_answers, call):
    assert seccomp_answers[call] == 0, os.strerror(seccomp_answers[call])


# -- a user per worker, on its own -------------------------------------------------------------------

IDENTITY_ONLY = r"""
import errno, json, os, resource, sys
sys.path.insert(0, sys.argv[3])
import entry
entry.load_package()
import importlib
identity = importlib.import_module("jaxplay_inside.identity")
layers = identity.become_worker(int(sys.argv[1]))
status = open("/proc/self/status").read()
caps = [line.split()[1] for line in status.splitlines() if line.startswith(("CapEff", "CapPrm", "CapBnd"))]
out = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "caps": caps, "layers": layers}
for pid in map(int, sys.argv[2].split(",")):
    for name, call in (("kill", lambda: os.kill(pid, 0)),
                       ("prlimit", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (64, 64))),
                       ("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19)),
                       ("sched_setaffinity", lambda: os.sched_setaffinity(pid, {0})),
                       ("sched_setscheduler", lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)))):
        try:
            call()
            out["%s(%d)" % (name, pid)] = 0
        except OSError as exc:
            out["%s(%d)" % (name, pid)] = exc.errno
print(json.dumps(out))
"""


@as_root
def test_a_worker_is_a_user_of_its_own_that_the_kernel_keeps_from_everyone_else(bystander):
    """No seccomp here: the kernel's same-user rules alone refuse a worker every call toward the server (root)
    and toward another worker (another uid), and it holds no capability to override them."""
    from grader.sandbox import users
    inside = str(ROOT / "grader" / "sandbox" / "inside")
    other_uid, uid = users.next_uid(), users.next_uid()
    other_worker = subprocess.Popen([sys.executable, "-c", "import os, time; os.setgid(%d); os.setuid(%d); "
                                     "time.sleep(300)" % (other_uid, other_uid)])
    try:
        time.sleep(0.5)
        done = subprocess.run([sys.executable, "-c", IDENTITY_ONLY, str(uid), f"{bystander},{other_worker.pid}",
                               inside], capture_output=True, text=True, timeout=120)
    finally:
        other_worker.kill()
        other_worker.wait()
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert (out["uid"], out["gid"], out["groups"]) == (uid, uid, [])
    assert out["caps"] == ["0000000000000000"] * 3, out["caps"]
    assert out["layers"]["identity"]["ok"], out["layers"]
    calls = {k: v for k, v in out.items() if "(" in k}
    assert len(calls) == 10 and all(v == errno.EPERM for v in calls.values()), calls


# -- the fork server keeps nothing a worker can change ---------------------------------------------

def _worker(server: ForkServer, job: dict) -> dict:
    """Run ``job`` in a fresh worker of ``server``."""
    child = server.spawn()
    try:
        outcome = supervise(child, job, Limits(wall_s=60), time.monotonic())
    finally:
        shutil.rmtree(child.scratch, ignore_errors=True)
    assert outcome.result and outcome.result["status"] == "ok", (outcome.result_error, outcome.stderr[-2000:])
    return outcome.result


def _attributes(pool: WorkerPool) -> dict:
    outcome = pool.run({"do": "attributes"}, Limits(wall_s=60))
    assert outcome.result and outcome.result["status"] == "ok", (outcome.result_error, outcome.stderr[-2000:])
    return outcome.result["attributes"] | {"uid": "each its own"}


def _poison(pid: int, hard_limits: bool) -> None:
    """Change what a hostile worker would have changed, as root can (the layers keep workers from it)."""
    import ctypes
    import resource
    os.setpriority(os.PRIO_PROCESS, pid, 19)
    os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))})
    ctypes.CDLL(None).syscall(251, 1, pid, 3 << 13)  # ioprio_set(IOPRIO_WHO_PROCESS, pid, IOPRIO_CLASS_IDLE)
    soft, hard = resource.prlimit(pid, resource.RLIMIT_STACK)
    resource.prlimit(pid, resource.RLIMIT_STACK, (1 << 20, (1 << 20) if hard_limits else hard))
    if hard_limits:  # what the issue saw: the next learner's run killed for want of CPU seconds or files
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (64, 64))


def test_a_hostile_worker_cannot_change_the_fork_server(mode):
    server = ForkServer(PROBE)
    try:
        assert _worker(server, {"do": "poison_parent"})["took"] == []
    finally:
        server.shutdown()


@pytest.mark.parametrize("hard_limits", [False, True], ids=["priority and soft limits", "hard limits too"])
def test_a_worker_forked_after_the_fork_server_changed_starts_as_the_first_did(mode, hard_limits):
    """The fork server puts back what it can before each fork (and each worker checks again); what it cannot
    (a lowered hard limit, without CAP_SYS_RESOURCE) makes it stop, and the pool starts a fresh one."""
    with WorkerPool(PROBE, 1, warm=1) as pool:
        baseline = _attributes(pool)
        assert pool.wait_ready()
        first = pool._forkserver
        _poison(first._server_pid, hard_limits)
        if hard_limits:  # it stops within a second (taking the worker it had ready with it)
            deadline = time.monotonic() + 30
            while not first.lost:
                assert time.monotonic() < deadline, "the fork server went on with lowered hard limits"
                time.sleep(0.05)
        else:
            _attributes(pool)  # the worker that was ready already, forked before the change
        after = _attributes(pool)  # forked after it
        assert after == baseline
        assert after["nice"] == 0 and after["policy"] == os.SCHED_OTHER
        assert (pool._forkserver is first) == (not hard_limits)  # put back in place, or replaced


# -- /proc -------------------------------------------------------------------------------------------

HIDDEN = ["/proc/self/net/tcp", "/proc/self/net/unix", "/proc/net/route", "/proc/SELF/task/SELF/net/dev",
          "/proc/self/mountinfo", "/proc/self/mounts", "/proc/self/cgroup", "/proc/self/environ",
          "/proc/self/maps", "/proc/1/status", "/proc/1/cmdline"]
SHOWN = ["/proc/self/status", "/proc/self/stat", "/proc/self/statm", "/proc/self/limits", "/proc/cpuinfo",
         "/proc/meminfo"]


@pytest.mark.parametrize("forked", [False, True], ids=["new process", "forked worker"])
def test_proc_shows_a_worker_its_own_status_and_nothing_of_the_host(mode, forked):
    job = {"do": "read", "paths": HIDDEN + SHOWN}
    if forked:
        server = ForkServer(PROBE)
        try:
            result = _worker(server, job)
        finally:
            server.shutdown()
    else:
        outcome = run_job(PROBE, job, Limits(wall_s=60))
        assert outcome.result, outcome.stderr[-2000:]
        result = outcome.result
    readable = result["readable"]
    assert [p for p in HIDDEN if readable[p]] == []
    assert [p for p in SHOWN if not readable[p]] == []


# -- bubblewrap wherever Python is -----------------------------------------------------------------

def test_bubblewraps_own_mounts_come_before_the_binds_of_python(tmp_path):
    """A later mount hides what an earlier one put beneath it: /tmp's tmpfs must not hide a venv in /tmp."""
    args = bwrap.bwrap_args(str(tmp_path / "scratch"))
    binds = [i for i, a in enumerate(args) if a == "--ro-bind" and args[i + 1] in bwrap.python_roots()]
    assert binds and args.index("--tmpfs") < min(binds)
    assert args.index("--proc") < min(binds) and args.index("--dev") < min(binds)


@pytest.fixture(scope="module")
def venv_in_tmp():
    folder = tempfile.mkdtemp(prefix="jaxplay-venv-", dir="/tmp")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", folder], check=True,
                   timeout=300)  # without pip: Debian's python3 has no ensurepip unless python3-venv is installed
    yield Path(folder) / "bin" / "python"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_the_doctor_finds_every_layer_with_python_in_a_venv_under_tmp(venv_in_tmp):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXPLAY_")}
    done = subprocess.run([str(venv_in_tmp), "-m", "grader", "doctor", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    info = json.loads(done.stdout)
    assert info["layers"]["bubblewrap"]["ok"], info["layers"]["bubblewrap"]
    assert all(v["ok"] for v in info["layers"].values()), info["layers"]
    assert info["workers"]["forked"], info["workers"]


@pytest.mark.parametrize("bubblewrap", ["1", "0"])
def test_a_venv_under_tmp_grades_with_and_without_bubblewrap(venv_in_tmp, bubblewrap):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXPLAY_")}
    env |= {"JAXPLAY_BWRAP": bubblewrap, "JAXPLAY_REQUIRE_SANDBOX": "all" if bubblewrap == "1" else "1"}
    reference = ROOT / "problems" / "rematerialized-mlp-block" / "reference.py"
    done = subprocess.run([str(venv_in_tmp), "-m", "grader", "check", "rematerialized-mlp-block", str(reference),
                           "--examples-only", "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert json.loads(done.stdout)[0]["verdict"] == "accepted", done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_the_doctor_says_plainly_when_bubblewrap_is_off():
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXPLAY_")} | {"JAXPLAY_BWRAP": "0"}
    done = subprocess.run([sys.executable, "-m", "grader", "doctor"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert "OFF bubblewrap" in done.stdout and "turned off by JAXPLAY_BWRAP=0" in done.stdout
    assert "Some isolation layers are OFF here: bubblewrap (turned off by JAXPLAY_BWRAP=0)" in done.stdout
