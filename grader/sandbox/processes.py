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
import stat
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


def held_files(pids: "list[int] | set[int]", scratch_dev: int | None) -> tuple[int, int]:
    """(bytes, memfd bytes) in files the processes ``pids`` hold that no folder shows: files of the scratch
    folder's file system (device ``scratch_dev``) that were removed, or never had a name (``O_TMPFILE``), while
    a descriptor or a mapping still holds them, and memfds (refused by seccomp; counted where it is off). Their
    pages are in no process's RSS while unmapped, so ``scratch_usage`` and the RSS watch would both miss them.
    Each file is counted once, however many descriptors and mappings hold it."""
    seen: set[tuple[int, int]] = set()
    scratch, memfd = 0, 0

    def count(name: str, nbytes: int, key: tuple[int, int]) -> None:
        nonlocal scratch, memfd
        if key in seen:
            return
        seen.add(key)
        if name.startswith("/memfd:"):
            memfd += nbytes
        else:
            scratch += nbytes

    for pid in pids:
        base = f"/proc/{pid}"
        try:
            fds = os.listdir(f"{base}/fd")
        except OSError:
            fds = []
        for fd in fds:
            try:
                name = os.readlink(f"{base}/fd/{fd}")
                if not name.endswith(" (deleted)"):
                    continue
                st = os.stat(f"{base}/fd/{fd}")  # the file itself, removed or not
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and not st.st_nlink and (
                    st.st_dev == scratch_dev or name.startswith("/memfd:")):
                count(name, st.st_blocks * 512, (st.st_dev, st.st_ino))
        try:
            with open(f"{base}/maps", "rb") as f:
                maps = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        for line in maps:
            if not line.endswith(" (deleted)"):
                continue
            parts = line.split(None, 5)
            try:
                major, minor = (int(x, 16) for x in parts[3].split(":"))
                key = (os.makedev(major, minor), int(parts[4]))
                start, end = (int(x, 16) for x in parts[0].split("-"))
            except (ValueError, IndexError):
                continue
            if key in seen or not (key[0] == scratch_dev or parts[5].startswith("/memfd:")):
                continue
            try:  # the file's own size: reading through the mapping needs CAP_SYS_ADMIN
                st = os.stat(f"{base}/map_files/{parts[0]}")
                nbytes = st.st_blocks * 512 if not st.st_nlink else 0
            except OSError:
                nbytes = end - start  # at most this much of it is held here
            count(parts[5], nbytes, key)
    return scratch, memfd


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
