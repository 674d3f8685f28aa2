"""A sandboxed process's own lockdown, in two steps, each reporting what it did layer by layer.

``before_import(scratch, uid)``, at start-up, while the process has one thread (Landlock and credentials
bind the threads started later, and JAX starts many): become a user of its own without capabilities
(``identity.py``), and restrict the file system, ``/proc`` and signals with Landlock (``landlock.py``).

``before_learner(limits)``, after the job is read and before learner code is compiled: resource limits and
the seccomp filter (``seccomp.py``) on every thread (TSYNC), which the threads JAX already started need too.

A layer the kernel lacks is reported, never fatal: the parent decides (``JAXPLAY_REQUIRE_SANDBOX``)
whether a run without it is acceptable.
"""
import os
import resource

from . import identity, landlock, seccomp


def apply_rlimits(limits, own_user):
    """CPU, address space, file size, open files, never a core dump; with a user of its own, also the
    number of threads (RLIMIT_NPROC counts every thread of the user, so it is set only then)."""
    def cap(which, soft, hard=None):
        try:
            resource.setrlimit(which, (soft, soft if hard is None else hard))
        except (ValueError, OSError):
            pass
    cap(resource.RLIMIT_CORE, 0)
    if limits.get("cpu_s"):
        cap(resource.RLIMIT_CPU, int(limits["cpu_s"]), int(limits["cpu_s"]) + 1)
    if limits.get("address_space_bytes"):
        cap(resource.RLIMIT_AS, int(limits["address_space_bytes"]))
    if limits.get("file_size_bytes") is not None:
        cap(resource.RLIMIT_FSIZE, int(limits["file_size_bytes"]))
    if limits.get("open_files"):
        cap(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    if own_user and limits.get("threads"):
        cap(resource.RLIMIT_NPROC, int(limits["threads"]))
    cap(resource.RLIMIT_MSGQUEUE, 0)
    cap(resource.RLIMIT_MEMLOCK, 0)
    return "cpu, memory, file size, files" + (", threads" if own_user and limits.get("threads") else "") + ", no core"


def worker_uid():
    """The uid the parent chose for a child it started itself (a forked worker gets it from the fork server)."""
    value = os.environ.get("JAXPLAY_WORKER_UID", "")
    return int(value) if value.isdigit() else None


def keep_read_search():
    """Whether the parent found Python under a folder only root may search (then the worker keeps
    CAP_DAC_READ_SEARCH: without it, it could not import anything)."""
    return os.environ.get("JAXPLAY_KEEP_READ_SEARCH") == "1"


def before_import(scratch, uid):
    """Start-up lockdown, while the process has one thread. Returns {layer: {"ok", "detail"}}."""
    try:
        report = identity.become_worker(uid, keep_read_search())
    except OSError as exc:
        failed = {"ok": False, "detail": "%s: %s" % (type(exc).__name__, exc)}
        report = {"privileges": failed, "identity": failed}
    report["landlock"] = attempt(landlock.restrict, scratch)
    return report


def before_learner(limits, own_user):
    """Lockdown after the job is read, before learner code. Returns {layer: {"ok", "detail"}}."""
    return {"rlimits": attempt(apply_rlimits, limits, own_user), "seccomp": attempt(seccomp.install)}


def attempt(fn, *args):
    """``{"ok": True, "detail": fn(*args)}``, or the error as the detail."""
    try:
        return {"ok": True, "detail": fn(*args)}
    except OSError as exc:
        return {"ok": False, "detail": "%s: %s" % (type(exc).__name__, exc)}
