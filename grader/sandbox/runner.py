"""Run one job in a sandboxed process and bring back plain data, whatever the process does.

A sandboxed process runs a *payload* (a Python file, see ``inside/__init__.py``) inside every isolation layer
that works here (``bwrap.py``; the lockdown it applies to itself, ``inside/lockdown.py``) as a user of its own
(``users.py``). It receives the job on a pipe of its own and answers on another; its stdout and stderr are
captured and capped, and it may send short progress messages on a third. The parent enforces a wall-clock
limit, a resident-memory limit, an output cap and a scratch-folder cap by killing the process's whole tree,
and reads the answer with bounds (``channels.py``). Each run's answer must carry a token sent with the job, so
bytes the learner's code writes on the channel by itself are not taken as an answer.
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from grader.sandbox import bwrap, policy, processes, users
from grader.sandbox.cleanup import remove_tree
from grader.sandbox.channels import CappedReader, ProgressReader, read_answer
from grader.sandbox.outcome import Limits, RunOutcome

PROGRESS_EVERY_S = 0.2
"""``on_progress`` is called at most this often (with the latest message)."""

UNSTARVED_CPU_SHARE = 0.5
"""A run past its own wall-clock limit that has used at least this share of it in CPU time is ended there,
even when the pool extended its limit after dropping its priority: the extension keeps a slow but correct
Submit that waited for the CPU on a busy machine, not a loop that had the CPU (at nice 5 an endless loop
otherwise ran to its CPU limit at about half speed: 31 s for a 16 s limit on a quiet two-core machine)."""


def child_env(scratch: str, uid: int | None = None) -> dict[str, str]:
    """A clean environment: nothing of the server's (its secrets included) reaches the sandbox."""
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
    if uid is not None:
        env["JAXPLAY_WORKER_UID"] = str(uid)
    if users.keep_read_search():
        env["JAXPLAY_KEEP_READ_SEARCH"] = "1"
    required = policy.required_layers()  # the sandboxed process checks them too, before any job runs
    if required:
        env["JAXPLAY_REQUIRE_LAYERS"] = ",".join(required)
    return env


def scratch_usage(scratch: str, max_entries: int) -> tuple[int, int]:
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


def child_command(payload: Path, job_fd: int, result_fd: int, progress_fd: int, scratch: str) -> list[str]:
    """The command that starts one sandboxed process: inside bubblewrap where it works (``bwrap.py``)."""
    return bwrap.command("cold", [str(job_fd), str(result_fd), str(progress_fd)], payload, scratch)


@dataclass
class Child:
    """A started sandboxed process and the parent's ends of its pipes."""

    proc: subprocess.Popen
    scratch: str
    job_w: int
    res_r: int
    out_r: int
    err_r: int
    progress_r: int

    def close_pipes(self) -> None:
        for fd in (self.job_w, self.res_r, self.out_r, self.err_r, self.progress_r):
            try:
                os.close(fd)
            except OSError:
                pass


def spawn_child(payload: Path) -> Child:
    """Start a sandboxed process for ``payload``. It prepares the payload, then blocks reading its job: a
    pool may start it early."""
    scratch = tempfile.mkdtemp(prefix="jaxplay-")
    uid = users.next_uid()
    if uid is not None:
        os.chown(scratch, uid, uid)
    job_r, job_w = os.pipe()
    res_r, res_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    prog_r, prog_w = os.pipe()
    try:
        proc = subprocess.Popen(
            child_command(payload, job_r, res_w, prog_w, scratch),
            stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w, pass_fds=(job_r, res_w, prog_w),
            cwd=scratch, env=child_env(scratch, uid), start_new_session=True, close_fds=True,
        )
    except BaseException:
        for fd in (job_w, res_r, out_r, err_r, prog_r):
            os.close(fd)
        remove_tree(scratch)
        raise
    finally:
        for fd in (job_r, res_w, out_w, err_w, prog_w):
            os.close(fd)
    return Child(proc, scratch, job_w, res_r, out_r, err_r, prog_r)


def with_limits(job: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The job as the sandboxed process receives it: the limits it applies to itself before learner code."""
    return dict(job, limits={
        "cpu_s": int(limits.wall_s) + 2,
        "address_space_bytes": limits.address_space_bytes,
        "file_size_bytes": limits.file_size_bytes,
        "open_files": limits.open_files,
        "threads": limits.threads,
    })


def run_job(payload: Path, job: dict[str, Any], limits: Limits = Limits(), *,
            on_progress: Callable[[str], None] | None = None) -> RunOutcome:
    """Run ``job`` on ``payload`` in a new sandboxed process under ``limits`` and return what came back."""
    started = time.monotonic()
    child = spawn_child(payload)
    try:
        return supervise(child, with_limits(job, limits), limits, started, on_progress=on_progress)
    finally:
        child.proc.wait()  # answered: killed, and gone in a moment
        remove_tree(child.scratch)


def supervise(child: Child, job: dict[str, Any], limits: Limits, started: float, *,
              on_progress: Callable[[str], None] | None = None,
              wall_s: Callable[[], float] | None = None) -> RunOutcome:
    """Feed the job, watch the limits from ``started`` on, collect the answer. The child is dead on return,
    or, once its answer has come, killed and perhaps still exiting (``proc.wait()`` if that matters); its
    scratch folder is the caller's to remove. ``on_progress(text)`` is called in this thread
    with the payload's latest progress message, at most every ``PROGRESS_EVERY_S``, and once more at the end
    with the last message if it was not told yet."""
    proc = child.proc
    wake = threading.Event()  # set when a pipe ends: the answer may be complete
    readers = [CappedReader(child.out_r, limits.shown_bytes, wake), CappedReader(child.err_r, limits.shown_bytes, wake),
               CappedReader(child.res_r, limits.result_bytes + 2, wake)]
    progress = ProgressReader(child.progress_r, wake)
    for r in (*readers, progress):
        r.start()
    nonce = secrets.token_hex(16)
    payload = json.dumps(dict(job, nonce=nonce)).encode()

    def feed() -> None:
        try:
            _write_all(child.job_w, payload)
        except OSError:
            pass
        finally:
            os.close(child.job_w)
    threading.Thread(target=feed, daemon=True).start()

    limit, peak, tick, cpu = None, 0, 0, [0.0, 0.0]  # CPU seconds: from wait4, as last seen in /proc
    held, held_memfd = 0, 0  # bytes in files the run holds that no folder shows (``processes.held_files``)
    try:
        scratch_dev: int | None = os.stat(child.scratch).st_dev
    except OSError:
        scratch_dev = None
    told, told_at = 0, 0.0
    answered = False
    try:
        while not _reaped(proc, cpu):
            if all(r.done for r in (*readers, progress)) and readers[2].data.strip():
                # the payload closes its output and progress pipes, then sends its answer and exits: nothing
                # more can come, and the process's own teardown (~10 ms) need not be waited for
                answered = True
                break
            elapsed = time.monotonic() - started
            if elapsed > (wall_s() if wall_s is not None else limits.wall_s):  # a pool may extend it (pool.py)
                limit = "time"
            elif elapsed > limits.wall_s and cpu[1] >= UNSTARVED_CPU_SHARE * limits.wall_s:
                limit = "time"  # the extension is for a run starved of the CPU, not for one that has had it
            elif readers[0].total + readers[1].total > limits.output_bytes:
                limit = "output"
            elif progress.total > limits.progress_bytes:
                limit = "progress"
            elif tick % 5 == 0:
                members = processes.tree(proc.pid)
                if tick % 20 == 0:
                    held, held_memfd = processes.held_files(members, scratch_dev)
                rss = sum(r for r, _ in members.values()) + held_memfd
                peak, cpu[1] = max(peak, rss), max(cpu[1], sum(c for _, c in members.values()))
                if rss > limits.memory_bytes:
                    limit = "memory"
                elif tick % 50 == 0:
                    used, entries = scratch_usage(child.scratch, limits.scratch_files)
                    if used + held > limits.scratch_bytes or entries > limits.scratch_files:
                        limit = "disk"
            if limit:
                break
            if on_progress is not None and progress.version != told and time.monotonic() - told_at >= PROGRESS_EVERY_S:
                told, told_at = progress.version, time.monotonic()
                on_progress(progress.last)
            tick += 1
            wake.wait(0.01)
            wake.clear()
    finally:
        if answered:  # its process group now; the sweep of its session (~2 ms reading /proc) after the answer
            processes.killpg(proc.pid)
            threading.Thread(target=processes.kill_tree, args=(proc.pid,), daemon=True).start()
        else:
            processes.kill_tree(proc.pid)  # also ends anything the child left behind in its session
            _reaped(proc, cpu, block=True)
        for r in (*readers, progress):
            r.join(timeout=2)
    if on_progress is not None and progress.version != told:  # the last word, even if it came within the
        on_progress(progress.last)  # throttle's interval of the one before (or of the answer)
    elapsed = time.monotonic() - started
    if limit is None and readers[0].total + readers[1].total > limits.output_bytes:
        limit = "output"

    result, result_error = None, None
    if limit is None:
        result, result_error, too_large = read_answer(readers[2].data, readers[2].total, nonce,
                                                      limits.result_bytes, limits.result_values)
        if too_large:
            limit = "answer"
    code = proc.returncode
    if bwrap.is_wrapped(proc.args) and code is not None and 128 < code <= 128 + 64:
        code = 128 - code  # bubblewrap reports a child killed by signal N as 128 + N
    return RunOutcome(
        result=result, stdout=readers[0].data.decode("utf-8", "replace"),
        stderr=readers[1].data.decode("utf-8", "replace"),
        output_truncated=readers[0].total > limits.shown_bytes or readers[1].total > limits.shown_bytes,
        exit_code=code, limit=limit, result_error=result_error, elapsed_s=elapsed,
        peak_rss_bytes=peak, cpu_s=max(cpu), progress=progress.last,
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
