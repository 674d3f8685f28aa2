"""seccomp: a BPF filter, x86-64 only, installed on every thread of the process (TSYNC) before learner code.

JAX needs most of the system call table (threads, mmap, futexes, files), so this is a deny list: sockets,
new processes, exec, namespaces, mounts, System V IPC, memfds (memory no process's RSS shows: ``memfd_create``,
``memfd_secret``) and kernel interfaces that bypass seccomp (io_uring).
Calls that act on another process are allowed only toward the process itself: signals (``kill``,
``tgkill``, ``rt_sigqueueinfo``), resource limits (``prlimit64``), priority (``setpriority``), scheduling
(``sched_setscheduler``, ``sched_setparam``, ``sched_setattr``, ``sched_setaffinity``), I/O priority
(``ioprio_set``), memory placement (``migrate_pages``, ``move_pages``) and the owner of an fd's signals
(``fcntl(F_SETOWN)``); ``ptrace``, ``process_vm_*``, ``pidfd_*``, ``kcmp`` and ``tkill`` are refused outright.
The filter compares the target with the pid it is installed for (``getpid()``, fixed for the process's
life), or 0 where 0 means "the caller". Threads have other ids, so a call naming one of the process's own
threads by tid is refused too; nothing the grader or JAX does needs that.
"""
import errno
import os
import platform
import struct
import sys

from . import kernel

AUDIT_ARCH_X86_64 = 0xC000003E
CLONE_THREAD = 0x00010000
CLONE_NEW_ANY = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
RET_KILL_PROCESS, RET_ALLOW = 0x80000000, 0x7FFF0000
RET_EPERM, RET_ENOSYS = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
LD_ABS_W, JEQ_K, JGE_K, JSET_K, JA, RET_K = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06

DENIED = {
    41: "socket", 42: "connect", 43: "accept", 49: "bind", 50: "listen", 53: "socketpair", 288: "accept4",
    57: "fork", 58: "vfork", 59: "execve", 322: "execveat", 101: "ptrace", 200: "tkill",
    109: "setpgid", 112: "setsid", 310: "process_vm_readv", 311: "process_vm_writev", 312: "kcmp",
    424: "pidfd_send_signal", 434: "pidfd_open", 438: "pidfd_getfd", 440: "process_madvise",
    165: "mount", 166: "umount2", 155: "pivot_root", 161: "chroot", 272: "unshare", 308: "setns",
    428: "open_tree", 429: "move_mount", 430: "fsopen", 431: "fsconfig", 432: "fsmount", 433: "fspick",
    442: "mount_setattr", 321: "bpf", 298: "perf_event_open", 323: "userfaultfd",
    425: "io_uring_setup", 426: "io_uring_enter", 427: "io_uring_register",
    248: "add_key", 249: "request_key", 250: "keyctl", 246: "kexec_load", 320: "kexec_file_load",
    175: "init_module", 313: "finit_module", 176: "delete_module", 169: "reboot", 167: "swapon",
    168: "swapoff", 163: "acct", 133: "mknod", 259: "mknodat", 303: "name_to_handle_at",
    304: "open_by_handle_at", 172: "iopl", 173: "ioperm", 300: "fanotify_init", 179: "quotactl",
    # System V IPC outlives a process: forked workers share one IPC namespace (``zygote.py``)
    29: "shmget", 30: "shmat", 31: "shmctl", 67: "shmdt", 64: "semget", 65: "semop", 66: "semctl",
    220: "semtimedop", 68: "msgget", 69: "msgsnd", 70: "msgrcv", 71: "msgctl",
    # memory no count sees: a memfd's pages are in no process's RSS, nor under RLIMIT_AS while unmapped
    319: "memfd_create", 447: "memfd_secret",
}
SELF = "self"
"""Stands for this process's pid in the rules below."""
TARGETED = {
    # nr: (name, [(argument index, allowed values)...]): every listed argument must hold an allowed value
    62: ("kill", [(0, (SELF,))]),  # never 0 (its process group) or -1 (everyone)
    234: ("tgkill", [(0, (SELF,))]),  # the thread group: a tid outside it is the kernel's ESRCH
    129: ("rt_sigqueueinfo", [(0, (SELF,))]),
    297: ("rt_tgsigqueueinfo", [(0, (SELF,))]),
    302: ("prlimit64", [(0, (0, SELF))]),
    141: ("setpriority", [(0, (0,)), (1, (0, SELF))]),  # PRIO_PROCESS only: never a process group or a user
    251: ("ioprio_set", [(0, (1,)), (1, (0, SELF))]),  # IOPRIO_WHO_PROCESS only
    203: ("sched_setaffinity", [(0, (0, SELF))]),
    144: ("sched_setscheduler", [(0, (0, SELF))]),
    142: ("sched_setparam", [(0, (0, SELF))]),
    314: ("sched_setattr", [(0, (0, SELF))]),
    256: ("migrate_pages", [(0, (0, SELF))]),
    279: ("move_pages", [(0, (0, SELF))]),
}
SYS_CLONE, SYS_CLONE3, SYS_FCNTL = 56, 435, 72
F_SETOWN, F_SETOWN_EX = 8, 15


class _Program:
    """BPF instructions with forward jumps to labels, resolved at the end."""

    def __init__(self):
        self.insns, self.labels, self.fixups = [], {}, []

    def emit(self, code, jt=0, jf=0, k=0):
        self.insns.append([code, jt, jf, k & 0xFFFFFFFF])

    def jump(self, code, k, true=None, false=None):
        """A conditional jump: each branch is a label name or None (the next instruction)."""
        self.fixups.append((len(self.insns), true, false))
        self.emit(code, 0, 0, k)

    def label(self, name):
        self.labels[name] = len(self.insns)

    def load_arg(self, index):
        self.emit(LD_ABS_W, 0, 0, 16 + 8 * index)  # seccomp_data.args[index], low 32 bits (pid_t, int)

    def ret(self, value):
        self.emit(RET_K, 0, 0, value)

    def assemble(self):
        for at, true, false in self.fixups:
            for slot, name in ((1, true), (2, false)):
                if name is not None:
                    offset = self.labels[name] - at - 1
                    if not 0 <= offset <= 255:
                        raise ValueError("BPF jump out of range")
                    self.insns[at][slot] = offset
        return [struct.pack("=HBBI", *insn) for insn in self.insns]


def program(pid):
    """The filter as raw BPF instructions, for x86-64. ``pid`` is this process: the only one it may act on."""
    p = _Program()
    p.emit(LD_ABS_W, 0, 0, 4)  # seccomp_data.arch
    p.jump(JEQ_K, AUDIT_ARCH_X86_64, false="kill")
    p.emit(LD_ABS_W, 0, 0, 0)  # seccomp_data.nr
    p.jump(JGE_K, 0x40000000, true="deny")  # the x32 ABI: a second table of the same calls
    for nr in sorted(DENIED):
        p.jump(JEQ_K, nr, true="deny")
    p.jump(JEQ_K, SYS_CLONE3, true="enosys")  # its flags are in memory: libc falls back to clone
    p.jump(JEQ_K, SYS_CLONE, false="after_clone")
    p.load_arg(0)  # flags
    p.jump(JSET_K, CLONE_NEW_ANY, true="deny")
    p.jump(JSET_K, CLONE_THREAD, true="allow", false="deny")
    p.label("after_clone")
    p.jump(JEQ_K, SYS_FCNTL, false="after_fcntl")
    p.load_arg(1)  # cmd
    p.jump(JEQ_K, F_SETOWN_EX, true="deny")  # its target is in memory, out of the filter's sight
    p.jump(JEQ_K, F_SETOWN, false="allow")
    p.load_arg(2)  # the owner: a pid, or a process group when negative
    p.jump(JEQ_K, 0, true="allow")
    p.jump(JEQ_K, pid, true="allow", false="deny")
    p.label("after_fcntl")
    for nr in sorted(TARGETED):
        _, checks = TARGETED[nr]
        after = "after_%d" % nr
        p.jump(JEQ_K, nr, false=after)
        for index, allowed in checks:
            ok = "ok_%d_%d" % (nr, index)
            p.load_arg(index)
            values = [pid if v == SELF else v for v in allowed]
            for v in values[:-1]:
                p.jump(JEQ_K, v, true=ok)
            p.jump(JEQ_K, values[-1], true=ok, false="deny")
            p.label(ok)
        p.ret(RET_ALLOW)
        p.label(after)
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("deny")
    p.ret(RET_EPERM)
    p.label("enosys")
    p.ret(RET_ENOSYS)
    p.label("kill")
    p.ret(RET_KILL_PROCESS)
    return p.assemble()


def install():
    """Install the filter on every thread of this process. Returns a description or raises OSError."""
    import ctypes
    if not sys.platform.startswith("linux") or platform.machine() != "x86_64":
        raise OSError(errno.ENOSYS, "the seccomp filter is written for x86-64 only")
    prog = program(os.getpid())
    filt = ctypes.create_string_buffer(b"".join(prog), 8 * len(prog))
    fprog = struct.pack("=HxxxxxxQ", len(prog), ctypes.addressof(filt))
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    kernel.set_no_new_privs()
    kernel.syscall(kernel.SYS_SECCOMP, 1, 1, fbuf)  # SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC
    return ("seccomp: no sockets, processes, exec, ptrace, System V IPC or memfds; signals, limits, priority, "
            "scheduling and affinity for itself only (%d instructions)" % len(prog))
