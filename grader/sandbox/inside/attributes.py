"""A process's scheduling attributes and resource limits, as the fork server had them when it started.

Workers are forked from the fork server and inherit its priority (nice), scheduling policy, CPU affinity, I/O
priority and resource limits. Workers cannot change the fork server (seccomp, and a uid of their own), but
should anything have, the fork server puts its own back before each fork and each worker checks again right
after it, while it still holds the capabilities to raise a limit or a priority: a worker forked after a
hostile one starts as the first one did.
"""
import os
import resource

from . import kernel

IOPRIO_WHO_PROCESS = 1
RLIMITS = sorted({getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")})


def _ioprio():
    try:
        return kernel.syscall(kernel.SYS_IOPRIO_GET, IOPRIO_WHO_PROCESS, 0)
    except OSError:
        return None


def snapshot():
    """This process's attributes now: ``{name: value}``."""
    param = os.sched_getparam(0)
    return {
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "policy": (os.sched_getscheduler(0), param.sched_priority),
        "affinity": frozenset(os.sched_getaffinity(0)),
        "ioprio": _ioprio(),
        "rlimits": {r: resource.getrlimit(r) for r in RLIMITS},
    }


def restore(saved):
    """Put back every attribute that differs from ``saved``. Returns the names of those that differed and
    could not be put back (an empty list when all is as saved)."""
    now = snapshot()
    failed = []

    def attempt(name, fn, *args):
        try:
            fn(*args)
        except (OSError, ValueError):
            failed.append(name)

    for r, limits in saved["rlimits"].items():
        if now["rlimits"].get(r) != limits:
            attempt("rlimit %d" % r, resource.setrlimit, r, limits)
    if now["policy"] != saved["policy"]:
        policy, priority = saved["policy"]
        attempt("scheduling policy", os.sched_setscheduler, 0, policy, os.sched_param(priority))
    if now["nice"] != saved["nice"]:
        attempt("nice", os.setpriority, os.PRIO_PROCESS, 0, saved["nice"])
    if now["affinity"] != saved["affinity"]:
        attempt("affinity", os.sched_setaffinity, 0, saved["affinity"])
    if saved["ioprio"] is not None and now["ioprio"] != saved["ioprio"]:
        attempt("I/O priority", kernel.syscall, kernel.SYS_IOPRIO_SET, IOPRIO_WHO_PROCESS, 0, saved["ioprio"])
    return failed
