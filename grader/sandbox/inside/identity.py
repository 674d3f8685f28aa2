"""Who a sandboxed process is: the fork server keeps only the capabilities it needs to start workers; a
worker (or a child started on its own) becomes a user of its own and keeps no capability.

With a uid of its own per worker, the kernel's same-user rules protect every other process: a worker can
signal, ptrace, renice, re-limit or re-pin no process but itself (and seccomp refuses those calls anyway).
This needs root (``CAP_SETUID``) where the grader starts the sandbox: as root without bubblewrap, or with
bubblewrap run as root. As an ordinary user every process shares that user, and the layer says so.
"""
import os
import struct

from . import kernel

CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 0, 1, 2, 3
CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_SYS_NICE, CAP_SYS_RESOURCE = 6, 7, 8, 23, 24
CAP_NAMES = {CAP_CHOWN: "chown", CAP_DAC_OVERRIDE: "dac_override", CAP_DAC_READ_SEARCH: "dac_read_search",
             CAP_FOWNER: "fowner", CAP_SETGID: "setgid", CAP_SETUID: "setuid", CAP_SETPCAP: "setpcap",
             CAP_SYS_NICE: "sys_nice", CAP_SYS_RESOURCE: "sys_resource"}
FORK_SERVER_CAPS = (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_SETGID, CAP_SETUID,
                    CAP_SETPCAP, CAP_SYS_NICE, CAP_SYS_RESOURCE)
"""What the fork server keeps, of what it was given: give each worker its own uid and scratch folder (chown),
remove the folder afterwards, and put back its own priority, scheduling and limits should anything have
changed them (raising a hard limit needs CAP_SYS_RESOURCE, which containers often withhold: then a fork
server whose limits were lowered stops, and the grader starts another). It never runs learner code; each
worker drops all of them before it does."""


def permitted():
    """The capabilities this process holds (its permitted set)."""
    try:
        with open("/proc/self/status") as f:
            mask = int(next(line for line in f if line.startswith("CapPrm:")).split()[1], 16)
    except (OSError, StopIteration, ValueError):
        return set()
    return {cap for cap in range(64) if mask >> cap & 1}


def _capset(caps):
    """Effective and permitted sets become ``caps`` (which must be permitted already); inheritable empty."""
    mask = 0
    for cap in caps:
        mask |= 1 << cap
    header = struct.pack("=Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = struct.pack("=IIIIII", mask & 0xFFFFFFFF, mask & 0xFFFFFFFF, 0, mask >> 32, mask >> 32, 0)
    import ctypes
    kernel.syscall(kernel.SYS_CAPSET, ctypes.create_string_buffer(header), ctypes.create_string_buffer(data))


def _drop_bounding_set(keep=()):
    """Drop every capability but ``keep`` from the bounding set (needs CAP_SETPCAP; an exec could not regain
    one, though seccomp refuses exec anyway)."""
    for cap in range(64):
        if cap not in keep:
            kernel.libc.prctl(kernel.PR_CAPBSET_DROP, cap, 0, 0, 0)


def _names(caps):
    return ", ".join("CAP_" + CAP_NAMES[c].upper() for c in caps)


def fork_server():
    """The fork server's privileges. Returns a description."""
    if os.geteuid() != 0:
        return "not root (uid %d): no privileges to give up" % os.geteuid()
    keep = tuple(cap for cap in FORK_SERVER_CAPS if cap in permitted())
    _drop_bounding_set(keep)
    _capset(keep)
    return "root with only %s" % _names(keep)


def become_worker(uid, keep_read_search=False):
    """Give up root: become ``uid`` (and its own group) with no capability, or, when ``keep_read_search``,
    with only CAP_DAC_READ_SEARCH (Python lives under a folder only root may search, such as ``/root``;
    Landlock still decides what may be read). Returns ``{"privileges": ..., "identity": ...}``, each
    ``{"ok", "detail"}``."""
    if os.geteuid() != 0:
        me = "uid %d" % os.geteuid()
        return {"privileges": {"ok": True, "detail": "not root (%s): no privileges to give up" % me},
                "identity": {"ok": False, "detail": "shares %s with the server and the other workers: a user "
                                                     "per worker needs the grader to run as root" % me}}
    if uid is None:  # root, but no uid was given: at least no capability
        _drop_bounding_set()
        _capset(())
        return {"privileges": {"ok": True, "detail": "root without capabilities"},
                "identity": {"ok": False, "detail": "shares uid 0 with the server: no worker uid was given"}}
    keep = (CAP_DAC_READ_SEARCH,) if keep_read_search else ()
    _drop_bounding_set(keep)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    if keep:
        kernel.prctl(kernel.PR_SET_KEEPCAPS, 1)
    os.setresuid(uid, uid, uid)
    _capset(keep)
    if keep:
        kernel.prctl(kernel.PR_SET_KEEPCAPS, 0)
    kernel.prctl(kernel.PR_SET_DUMPABLE, 1)  # changing uid made it undumpable: its /proc entry root's
    if os.getuid() != uid or os.getgid() != uid:
        raise OSError("the worker is uid %d, not %d" % (os.getuid(), uid))
    what = "only CAP_DAC_READ_SEARCH (Python is under a folder only root may search)" if keep else "no capabilities"
    return {"privileges": {"ok": True, "detail": "uid %d, %s" % (uid, what)},
            "identity": {"ok": True, "detail": "a user of its own (uid %d): no other process shares it" % uid}}
