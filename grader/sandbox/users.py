"""Which user each sandboxed process becomes: a uid of its own, from a range no one else uses.

Every worker (and every child started on its own) gets the next uid of the range, and its own group of the
same number, so the kernel's same-user rules keep it from every other process: it cannot signal, ptrace,
renice, re-limit or re-pin the server, the fork server or another worker. Only root can hand out uids; as
another user there is no range, and workers share the server's user (``status()`` says so).

``JAXPLAY_WORKER_UIDS=START:COUNT`` sets the range (default 2000000000:16777216, far above the uids
distributions, systemd and container tools hand out). Each grader process starts at a random place in it,
so two graders on one machine (the app and a command line) are unlikely to meet, and hands out uids in turn,
so one process reuses a uid only after COUNT others.
"""
from __future__ import annotations

import functools
import os
import pwd
import secrets
import stat
import threading

from grader.sandbox import bwrap

DEFAULT_RANGE = (2_000_000_000, 1 << 24)

_lock = threading.Lock()
_next: int | None = None


def uid_range() -> tuple[int, int]:
    """(first uid, how many)."""
    try:
        start, count = (int(x) for x in os.environ["JAXPLAY_WORKER_UIDS"].split(":"))
        if start > 0 and count > 0 and start + count < 2**31:
            return start, count
    except (KeyError, ValueError):
        pass
    return DEFAULT_RANGE


def can_assign() -> bool:
    """Whether this process may hand out uids (it is root)."""
    return os.geteuid() == 0


def next_uid() -> int | None:
    """A uid for the next sandboxed process, or None when this process cannot hand out uids."""
    global _next
    if not can_assign():
        return None
    start, count = uid_range()
    with _lock:
        if _next is None:
            _next = secrets.randbelow(count)
        uid = start + _next % count
        _next += 1
    return uid


@functools.lru_cache(maxsize=4)
def _status(euid: int, start: int, count: int) -> tuple[bool, str]:
    if euid != 0:
        return False, (f"the grader runs as uid {euid}, not root, so every worker shares that user; "
                       "seccomp still refuses every call toward another process, and Landlock every signal")
    taken = sorted(p.pw_name for p in pwd.getpwall() if start <= p.pw_uid < start + count)
    if taken:
        return False, f"the worker uid range {start}-{start + count - 1} holds users of this system: {taken[:3]}"
    return True, f"each worker is a user of its own (uids {start}-{start + count - 1})"


def status() -> tuple[bool, str]:
    """Whether workers get users of their own here, and why not if they do not."""
    return _status(os.geteuid(), *uid_range())


def keep_read_search() -> bool:
    """Whether a worker must keep CAP_DAC_READ_SEARCH to read Python: without bubblewrap (which shows Python
    through world-searchable folders) as root, when a folder above Python lets only its owner in."""
    if not can_assign() or bwrap.use_bwrap():
        return False
    for root in bwrap.python_roots():
        path = root
        while path not in ("/", ""):
            try:
                mode = os.stat(path).st_mode
            except OSError:
                return True
            if not mode & stat.S_IXOTH or (path == root and not mode & stat.S_IROTH):
                return True
            path = os.path.dirname(path)
    return False
