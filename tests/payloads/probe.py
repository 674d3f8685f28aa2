"""A payload for the sandbox's own tests: it reports what a worker sees of itself and of others, and can
behave like hostile learner code (``job["do"]`` names what to do)."""
import errno
import os
import resource
import time

WATCHED_MODULES = ()


def prepare():
    return {}


def start(state):
    pass


def _ioprio():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(252, 1, 0)  # ioprio_get(IOPRIO_WHO_PROCESS, self)


def attributes():
    """Nice, scheduling policy, affinity, I/O priority and every resource limit of this process."""
    return {"nice": os.getpriority(os.PRIO_PROCESS, 0), "policy": os.sched_getscheduler(0),
            "affinity": sorted(os.sched_getaffinity(0)), "ioprio": _ioprio(),
            "rlimits": {name: list(resource.getrlimit(getattr(resource, name)))
                        for name in sorted(dir(resource)) if name.startswith("RLIMIT_")},
            "uid": os.getuid()}


def poison_parent():
    """Try to renice, deschedule, pin and re-limit the parent (the fork server); return what took."""
    parent, took = os.getppid(), []
    for name, change in (("nice", lambda: os.setpriority(os.PRIO_PROCESS, parent, 19)),
                         ("policy", lambda: os.sched_setscheduler(parent, os.SCHED_IDLE, os.sched_param(0))),
                         ("affinity", lambda: os.sched_setaffinity(parent, {0})),
                         ("nofile", lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE, (16, 16)))):
        try:
            change()
            took.append(name)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EACCES):
                took.append("%s: %s" % (name, exc))
    return took


def readable(paths):
    out = {}
    for path in paths:
        try:
            with open(path.replace("SELF", str(os.getpid())), "rb") as f:
                f.read(1)
            out[path] = True
        except OSError:
            out[path] = False
    return out


def run(state, job, guard, progress):
    do = job.get("do")
    if do == "attributes":
        return {"status": "ok", "attributes": attributes()}
    if do == "poison_parent":
        return {"status": "ok", "took": poison_parent()}
    if do == "read":
        return {"status": "ok", "readable": readable(job["paths"])}
    if do == "progress":  # many messages, some long, then a wait
        for i in range(job["count"]):
            progress("case %d of %d %s" % (i + 1, job["count"], "x" * job.get("pad", 0)))
        time.sleep(job.get("then_sleep", 0))
        return {"status": "ok"}
    if do == "flood_progress":
        while True:
            progress("y" * 150)
    raise ValueError(do)
