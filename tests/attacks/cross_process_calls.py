# problem: traced-learning-rate-schedule
# expect: runtime_error
# what: every call that acts on another process (limits, priority, scheduling, affinity, I/O priority, signals, ptrace, memory, pidfds, fcntl F_SETOWN) toward every pid it can name; accepted if any got through
import jax
import jax.numpy as jnp

import ctypes, errno, fcntl, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
mine = {int(t) for t in os.listdir("/proc/self/task")}  # its own threads are itself
ok = []


def attempt(name, pid, fn):
    try:
        if fn() is False:
            return
        ok.append(f"{name}({pid})")
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EACCES, errno.ESRCH, errno.EINVAL):
            ok.append(f"{name}({pid}): {exc}")


def raw(nr, *args):
    res = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    if res < 0:
        raise OSError(ctypes.get_errno(), "")
    return True


buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
r, w = os.pipe()
for pid in range(1, 3000):
    if pid in mine:
        continue
    attempt("kill", pid, lambda: os.kill(pid, 0))
    attempt("prlimit", pid, lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE))
    attempt("setpriority", pid, lambda: raw(141, 0, pid, 19))
    attempt("sched_setaffinity", pid, lambda: os.sched_setaffinity(pid, {0}))
    attempt("sched_setscheduler", pid, lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)))
    attempt("sched_setparam", pid, lambda: raw(142, pid, ctypes.addressof(ctypes.c_int(0))))
    attempt("ioprio_set", pid, lambda: raw(251, 1, pid, (3 << 13)))
    attempt("ptrace", pid, lambda: raw(101, 0x4206, pid, 0, 0))
    attempt("process_vm_readv", pid, lambda: raw(310, pid, ctypes.addressof(iov), 1, ctypes.addressof(iov), 1, 0))
    attempt("pidfd_open", pid, lambda: raw(434, pid, 0))
    attempt("tgkill", pid, lambda: raw(234, pid, pid, 0))
    attempt("fcntl_setown", pid, lambda: fcntl.fcntl(r, fcntl.F_SETOWN, pid))
    attempt("fcntl_setown_group", pid, lambda: fcntl.fcntl(r, fcntl.F_SETOWN, -pid))
if ok:
    print("got through:", ok[:20])


def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):
    if not ok:
        raise RuntimeError("every call toward another process was refused")
    t = jnp.asarray(step, jnp.float32)
    warmup = base_lr * (t + 1.0) / max(warmup_steps, 1)
    progress = jnp.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = min_lr + (base_lr - min_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
    return jnp.where(step < warmup_steps, warmup, decay)
