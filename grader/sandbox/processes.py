"""Process trees seen from the grader: what a sandboxed process and its descendants use, killing them, and
waiting until every process a command line started is gone.

bubblewrap adds processes of its own between the grader and the sandboxed Python (its monitor and the init
of its PID namespace), and a process that loses its parent is handed to the nearest "subreaper", normally
the machine's init. ``reaping_children()`` makes the grader that subreaper while it runs, so that when it
ends it can kill and reap every process it started, however deep, before the command line exits.
"""
from __future__ import annotations

import ctypes
import os
import signal
import time
from contextlib import contextmanager
from typing import Iterator

PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)


def tree(pid: int) -> dict[int, tuple[int, float]]:
    """{pid: (rss bytes, cpu seconds)} of ``pid``, its descendants and anything in its session. Under
    bubblewrap the sandboxed Python runs in a session of its own inside bwrap's process tree, hence both."""
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


def kill_tree(pid: int) -> None:
    """SIGKILL process group ``pid``, then every process still in its tree or session."""
    killpg(pid)
    for member in tree(pid):
        try:
            os.kill(member, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def children() -> list[int]:
    """Pids of this process's children (zombies included)."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == me:
                        out.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return out


def reap_all_children(timeout: float = 20.0) -> list[int]:
    """Kill every child of this process and reap it, until there are none (orphans handed to us meanwhile
    included). Returns the pids still there at ``timeout`` (none, normally)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return []
        left = children()
        if not left:
            return []
        if time.monotonic() > deadline:
            return left
        for pid in left:
            killpg(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


@contextmanager
def reaping_children() -> Iterator[None]:
    """Adopt every orphaned descendant while the block runs; when it ends, kill and reap every child left.

    For a command line: nothing it started (a fork server, bubblewrap's init, a worker) outlives it. Not for
    a long-running server, whose other children the final sweep would kill."""
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        reap_all_children()
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
