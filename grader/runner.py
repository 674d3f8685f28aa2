"""Run one job in a child process and bring back plain data, whatever the child does.

The child (``grader/child.py``) receives the job on a pipe of its own and answers on another; its
stdout/stderr are the learner's, captured and capped here. The parent enforces a wall-clock limit, a
resident-memory limit and an output cap by killing the child's whole process group, and it parses the
answer as JSON with a size cap: it never unpickles anything the child sends. Each run's answer must carry
a token sent with the job, so bytes a submission writes on the channel by itself are not taken as a result.
Isolation layers (``sandbox.py``, ``lockdown.py``) come in through ``child_command`` and ``child_env``.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import sandbox

CHILD_SCRIPT = Path(__file__).with_name("child.py")


@dataclass(frozen=True)
class Limits:
    """What one submission may use."""

    wall_s: float = 30.0
    """Wall-clock seconds of the run: from spawn for a cold child (JAX start-up included), from job delivery
    for a pooled worker (see ``supervise``'s ``started``)."""
    memory_bytes: int = 2 << 30
    """Resident memory of the child's process group; above it the child is killed."""
    address_space_bytes: int = 8 << 30
    """RLIMIT_AS inside the child: large allocations fail there with MemoryError."""
    output_bytes: int = 1 << 20
    """stdout plus stderr; past this the child is killed (Output Limit Exceeded)."""
    shown_bytes: int = 20_000
    """How much of stdout and of stderr is kept for the report."""
    result_bytes: int = 32 << 20
    """The largest answer the parent will read from the child."""
    file_size_bytes: int = 16 << 20
    open_files: int = 256
    scratch_bytes: int = sandbox.SCRATCH_BYTES
    """Bytes in the scratch folder; past this the child is killed (its files count as output)."""
    scratch_files: int = 2000
    """Files and folders in the scratch folder."""


@dataclass
class RunOutcome:
    """What came back from one child run."""

    result: dict[str, Any] | None
    """The child's JSON answer, or None if it gave none (killed, crashed, exited early, garbled)."""
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    exit_code: int | None = None
    """The child's exit status; negative for a signal, as ``subprocess`` reports it."""
    limit: str | None = None
    """``time``, ``memory``, ``output`` or ``disk`` (scratch folder) when the parent killed the child for it."""
    result_error: str | None = None
    """Why the answer could not be read, when there was something on the channel."""
    elapsed_s: float = 0.0
    peak_rss_bytes: int = 0
    cpu_s: float = 0.0
    """CPU seconds (user + system) of the child and its processes, from wait4 or sampled while it ran."""


class _CappedReader(threading.Thread):
    """Drains a pipe, keeping at most ``keep`` bytes and counting all of them."""

    def __init__(self, fd: int, keep: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.keep = fd, keep
        self.data = bytearray()
        self.total = 0

    def run(self) -> None:
        try:
            while True:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    break
                self.total += len(chunk)
                room = self.keep - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
        except OSError:
            pass
        finally:
            os.close(self.fd)


def child_env(scratch: str) -> dict[str, str]:
    """A clean environment: nothing of the server's (its secrets included) reaches the child."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": scratch,
        "TMPDIR": scratch,
        "JAX_PLATFORMS": "cpu",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # needed for correct results on some CPUs
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(sandbox.child_env_extra())
    return env


def _tree(pid: int) -> dict[int, tuple[int, float]]:
    """{pid: (rss bytes, cpu seconds)} of the child, its descendants and anything in its session. Under
    bubblewrap the Python child runs in a session of its own inside bwrap's process tree, hence both."""
    procs = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            procs[int(entry)] = (int(fields[1]), int(fields[3]), int(fields[21]),  # ppid, session, rss pages,
                                 int(fields[11]) + int(fields[12]))  # utime + stime in clock ticks
        except (OSError, IndexError, ValueError):
            continue
    members = {p for p, (_, sid, _, _) in procs.items() if sid == pid} | {pid}
    grew = True
    while grew:
        more = {p for p, (ppid, _, _, _) in procs.items() if ppid in members and p not in members}
        members |= more
        grew = bool(more)
    page, tick = os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_CLK_TCK")
    return {p: (procs[p][2] * page, procs[p][3] / tick) for p in members if p in procs}


def killpg(pid: int) -> None:
    """SIGKILL process group ``pid`` if it still exists (never 0 or below: those would name our own)."""
    if pid <= 0:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the child's process group, then every process still in its tree or session."""
    killpg(proc.pid)
    for pid in _tree(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _scratch_usage(scratch: str, max_entries: int) -> tuple[int, int]:
    """(bytes, entries) in the scratch folder, counting at most ``max_entries + 1`` entries."""
    size, count, stack = 0, 0, [scratch]
    while stack and count <= max_entries:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    count += 1
                    if count > max_entries:
                        break
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        else:
                            size += e.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        pass
        except OSError:
            pass
    return size, count


def child_command(job_fd: int, result_fd: int, scratch: str) -> list[str]:
    """The command that starts one child: inside bubblewrap where it works (``sandbox.py``)."""
    return sandbox.wrap_child(sys.executable, CHILD_SCRIPT, [str(job_fd), str(result_fd)], scratch)


@dataclass
class Child:
    """A started child process and the parent's ends of its pipes."""

    proc: subprocess.Popen
    scratch: str
    job_w: int
    res_r: int
    out_r: int
    err_r: int


def spawn_child() -> Child:
    """Start a child. It imports JAX, then blocks reading its job: a pool may start it early."""
    scratch = tempfile.mkdtemp(prefix="jaxplay-")
    job_r, job_w = os.pipe()
    res_r, res_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = subprocess.Popen(
            child_command(job_r, res_w, scratch),
            stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w, pass_fds=(job_r, res_w),
            cwd=scratch, env=child_env(scratch), start_new_session=True, close_fds=True,
        )
    except BaseException:
        for fd in (job_w, res_r, out_r, err_r):
            os.close(fd)
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    finally:
        for fd in (job_r, res_w, out_w, err_w):
            os.close(fd)
    return Child(proc, scratch, job_w, res_r, out_r, err_r)


def with_limits(job: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The job as the child receives it: the limits it applies to itself before learner code runs."""
    return dict(job, limits={
        "cpu_s": int(limits.wall_s) + 2,
        "address_space_bytes": limits.address_space_bytes,
        "file_size_bytes": limits.file_size_bytes,
        "open_files": limits.open_files,
    })


def run_job(job: dict[str, Any], limits: Limits = Limits()) -> RunOutcome:
    """Run ``job`` in a fresh child process under ``limits`` and return what came back."""
    started = time.monotonic()
    child = spawn_child()
    try:
        return supervise(child, with_limits(job, limits), limits, started)
    finally:
        shutil.rmtree(child.scratch, ignore_errors=True)


def supervise(child: Child, job: dict[str, Any], limits: Limits, started: float) -> RunOutcome:
    """Feed the job, watch the limits from ``started`` on, collect the answer; the child is always dead on
    return (its scratch folder is the caller's to remove)."""
    proc, job_w, res_r, out_r, err_r = child.proc, child.job_w, child.res_r, child.out_r, child.err_r
    readers = [_CappedReader(out_r, limits.shown_bytes), _CappedReader(err_r, limits.shown_bytes),
               _CappedReader(res_r, limits.result_bytes + 1)]
    for r in readers:
        r.start()
    nonce = secrets.token_hex(16)
    payload = json.dumps(dict(job, nonce=nonce)).encode()

    def feed() -> None:
        try:
            _write_all(job_w, payload)
        except OSError:
            pass
        finally:
            os.close(job_w)
    threading.Thread(target=feed, daemon=True).start()

    limit, peak, tick, cpu = None, 0, 0, [0.0, 0.0]  # CPU seconds: from wait4, as last seen in /proc
    while not _reaped(proc, cpu):
        elapsed = time.monotonic() - started
        if elapsed > limits.wall_s:
            limit = "time"
        elif readers[0].total + readers[1].total > limits.output_bytes:
            limit = "output"
        elif tick % 5 == 0:
            tree = _tree(proc.pid)
            rss = sum(r for r, _ in tree.values())
            peak, cpu[1] = max(peak, rss), max(cpu[1], sum(c for _, c in tree.values()))
            if rss > limits.memory_bytes:
                limit = "memory"
            elif tick % 50 == 0:
                used, entries = _scratch_usage(child.scratch, limits.scratch_files)
                if used > limits.scratch_bytes or entries > limits.scratch_files:
                    limit = "disk"
        if limit:
            break
        tick += 1
        time.sleep(0.01)
    _kill_group(proc)  # also ends anything the child left behind in its session
    _reaped(proc, cpu, block=True)
    for r in readers:
        r.join(timeout=2)
    elapsed = time.monotonic() - started
    if limit is None and readers[0].total + readers[1].total > limits.output_bytes:
        limit = "output"

    result, result_error = None, None
    raw = bytes(readers[2].data).lstrip(b"\n")  # the child's readiness byte, if a pool did not take it
    if limit is None and raw:
        if len(raw) > limits.result_bytes:
            result_error = "the answer from the child was larger than the cap"
        else:
            try:
                result = json.loads(raw)
                if not isinstance(result, dict) or "status" not in result:
                    result, result_error = None, "the answer from the child had no status"
                elif result.pop("nonce", None) != nonce:
                    result, result_error = None, "the answer did not come from the grader's own code"
            except (ValueError, RecursionError) as exc:
                result_error = f"the answer from the child was not valid JSON ({type(exc).__name__})"
    code = proc.returncode
    if sandbox.is_wrapped(proc.args) and code is not None and 128 < code <= 128 + 64:
        code = 128 - code  # bubblewrap reports a child killed by signal N as 128 + N
    return RunOutcome(
        result=result, stdout=readers[0].data.decode("utf-8", "replace"),
        stderr=readers[1].data.decode("utf-8", "replace"),
        output_truncated=readers[0].total > limits.shown_bytes or readers[1].total > limits.shown_bytes,
        exit_code=code, limit=limit, result_error=result_error, elapsed_s=elapsed,
        peak_rss_bytes=peak, cpu_s=max(cpu),
    )


def _reaped(proc: subprocess.Popen, cpu: list[float], block: bool = False) -> bool:
    """Whether the child has exited; reaps it with wait4 to keep its CPU seconds in ``cpu[0]`` (past the hard
    RLIMIT_CPU the kernel sends SIGKILL, which is a time limit, not a crash)."""
    if proc.returncode is not None:
        return True
    if not isinstance(proc, subprocess.Popen):  # forked by the fork server: it reports exit and CPU seconds
        if block:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # killed, yet not reported: the fork server is stuck
                proc.returncode = -signal.SIGKILL
        if proc.poll() is None:
            return False
        cpu[0] = getattr(proc, "cpu_s", 0.0)
        return True
    try:
        pid, status, usage = os.wait4(proc.pid, 0 if block else os.WNOHANG)
    except ChildProcessError:  # reaped elsewhere
        proc.wait()
        return True
    if pid == 0:
        return False
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu[0] = usage.ru_utime + usage.ru_stime
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
