"""The doctor's proof, run inside a locked-down process on request (``{"selftest": true}`` in the job): every
call that would act on another process is refused, ``/proc`` shows nothing of the host, and no shared memory
(which no count of the run's memory would see) can be had.

Each call targets the process's parent (the fork server, or bubblewrap's or the grader's process) and pid 1
of its PID namespace, and would change nothing even if it were allowed (the values set are the current ones;
signal 0 only asks whether a signal could be sent).
"""
import ctypes
import errno
import os
import resource

from . import kernel

PTRACE_SEIZE, PTRACE_DETACH = 0x4206, 17
SYS_MEMFD_SECRET = 447
CROSS_PROCESS_CALLS = ("kill", "prlimit", "setpriority", "sched_setaffinity", "sched_setscheduler", "ptrace")
HIDDEN_PROC_FILES = ("/proc/self/net/tcp", "/proc/self/net/unix", "/proc/self/mountinfo", "/proc/self/cgroup",
                     "/proc/self/environ", "/proc/1/cmdline")


def _calls(pid):
    """(name, fn) pairs that would act on ``pid`` without changing it."""
    def ptrace():
        if kernel.libc.ptrace(PTRACE_SEIZE, pid, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "ptrace")
        kernel.libc.ptrace(PTRACE_DETACH, pid, 0, 0)
    return [("kill", lambda: os.kill(pid, 0)),
            ("prlimit", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE)),
            ("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid))),
            ("sched_setaffinity", lambda: os.sched_setaffinity(pid, os.sched_getaffinity(pid))),
            ("sched_setscheduler", lambda: os.sched_setscheduler(pid, os.sched_getscheduler(pid),
                                                                 os.sched_getparam(pid))),
            ("ptrace", ptrace)]


def shared_memory():
    """The kinds of shared memory this process could get (none, when the sandbox holds); each is let go at once."""
    allowed = []
    try:
        os.close(os.memfd_create("jaxplay-selftest"))
        allowed.append("memfd_create")
    except (OSError, AttributeError):
        pass
    try:
        os.close(kernel.syscall(SYS_MEMFD_SECRET, 0))
        allowed.append("memfd_secret")
    except OSError:
        pass
    path = "/dev/shm/jaxplay-selftest-%d" % os.getpid()
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.unlink(path)
        allowed.append("/dev/shm")
    except OSError:
        pass
    shmid = kernel.libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if shmid >= 0:
        kernel.libc.shmctl(shmid, 0, None)  # IPC_RMID
        allowed.append("shmget")
    return allowed


def run():
    """{"cross_process": {"ok", "detail"}, "proc": {"ok", "detail"}}: what got through, if anything."""
    allowed = []
    for pid in sorted({os.getppid(), 1} - {os.getpid(), 0}):
        for name, call in _calls(pid):
            try:
                call()
                allowed.append("%s(%d)" % (name, pid))
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EACCES, errno.ESRCH):
                    allowed.append("%s(%d): %s" % (name, pid, exc))
    readable = []
    for path in HIDDEN_PROC_FILES:
        try:
            with open(path, "rb") as f:
                f.read(1)
            readable.append(path)
        except OSError:
            pass
    shared = shared_memory()
    return {
        "shared_memory": {"ok": not shared, "detail": "refused: memfd_create, memfd_secret, POSIX shared memory "
                          "(/dev/shm), System V shmget" if not shared else "allowed: " + ", ".join(shared)},
        "cross_process": {"ok": not allowed, "detail": "refused toward its parent and pid 1: " + ", ".join(
            CROSS_PROCESS_CALLS) if not allowed else "allowed: " + ", ".join(allowed)},
        "proc": {"ok": not readable, "detail": "its network view, mounts, cgroup and other processes hidden"
                 if not readable else "readable: " + ", ".join(readable)},
    }
