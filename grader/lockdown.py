"""The child's own lockdown: what a child process does to itself before learner code runs.

Loaded by ``child.py`` from its own folder (the child runs with ``python -I``, so it has no sys.path entry
for it); standard library and ctypes only, so it works inside bubblewrap's minimal view. Two steps:

``before_import(scratch)``, at start-up, before JAX starts any thread: give up root (or at least every
capability), set no_new_privs, and restrict the file system with Landlock. Landlock and capabilities are
per thread and only inherited by threads started later, so this must run while the process has one thread.

``before_learner(limits)``, after the job is read and before learner code is compiled: resource limits and a
seccomp filter installed on every thread (TSYNC), which XLA's threads already running need too.

Each layer reports what it did as a short string; a layer the kernel lacks is reported, never fatal, and the
parent decides (``JAXPLAY_REQUIRE_SANDBOX``) whether a run without it is acceptable.
"""
import ctypes
import errno
import os
import resource
import struct
import sys

NOBODY = 65534
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int

PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
SYS_SECCOMP, SYS_CAPSET = 317, 126


def _syscall(*args):
    res = _libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if res < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return res


# ----------------------------------------------------------------------------------------------------
# Privileges.

def drop_privileges():
    """Become ``nobody`` when asked to (bubblewrap, where the view is world-readable); otherwise, as root,
    keep uid 0 but drop every capability. Returns what was done."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return "not root"
    if os.environ.get("JAXPLAY_DROP_UID") == str(NOBODY):
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        return "running as nobody"
    for cap in range(64):  # the bounding set first: it needs CAP_SETPCAP, which capset removes
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = struct.pack("=Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # two zeroed __user_cap_data_struct: no effective, permitted or inheritable caps
    hbuf, dbuf = ctypes.create_string_buffer(header), ctypes.create_string_buffer(data)
    _syscall(SYS_CAPSET, hbuf, dbuf)
    return "root without capabilities"


def set_no_new_privs():
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


# ----------------------------------------------------------------------------------------------------
# Landlock: read-only what Python and JAX import, read-write the scratch folder, nothing else; with ABI 4+
# no TCP bind/connect, with ABI 6+ no signals or abstract unix sockets outside this process's domain.

FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK, FS_MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


def landlock_abi():
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled (or this is not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return _syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    except OSError:
        return 0


def _fs_handled(abi):
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def read_paths():
    """Where Python, NumPy and JAX are read from (their import paths), plus system libraries."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    paths += [p for p in sys.path if p]
    paths += ["/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib", "/lib", "/lib64",
              "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
              "/usr/share/zoneinfo", "/sys/devices/system/cpu", "/proc/cpuinfo", "/proc/meminfo",
              "/proc/%d" % os.getpid(), "/dev/urandom", "/dev/random", "/dev/zero"]
    here = os.path.dirname(os.path.realpath(__file__))
    app_root = os.path.dirname(here)  # the repository: never readable, nor any folder above it, nor any
    prefixes = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)]  # folder in it but a venv's
    out = []
    for p in paths:
        real = os.path.realpath(p)
        if not os.path.exists(real):
            continue
        if app_root != "/" and (app_root == real or app_root.startswith(real.rstrip("/") + "/")):
            continue
        inside_app = app_root != "/" and real.startswith(app_root + "/")
        if inside_app and not any(real == q or real.startswith(q + "/") for q in prefixes):
            continue
        if real == "/":
            continue
        if real not in out:
            out.append(real)
    return out


def restrict_filesystem(scratch):
    """Apply Landlock to this thread (and all it starts later). Returns a description or raises OSError."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available in this kernel")
    handled_fs = _fs_handled(abi)
    handled_net = (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    abuf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(SYS_LANDLOCK_CREATE_RULESET, abuf, len(attr), 0)
    try:
        read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
        write = (read | FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG
                 | FS_MAKE_SYM | (FS_TRUNCATE if abi >= 3 else 0) | (FS_REFER if abi >= 2 else 0))
        rules = [(p, read) for p in read_paths()]
        rules.append(("/dev/null", FS_READ_FILE | FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0)))
        if scratch and os.path.isdir(scratch) and os.path.realpath(scratch) != "/":
            rules.append((os.path.realpath(scratch), write))
        for path, rights in rules:
            _add_path_rule(ruleset, path, rights & handled_fs)
        set_no_new_privs()
        _syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    extra = (", no TCP" if handled_net else "") + (", signals and abstract sockets scoped" if scoped else "")
    return "Landlock ABI %d: read-only imports, read-write scratch%s" % (abi, extra)


def _add_path_rule(ruleset, path, rights):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr is packed
        rbuf = ctypes.create_string_buffer(rule, len(rule))
        _syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, rbuf, 0)  # LANDLOCK_RULE_PATH_BENEATH
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------------------------------
# seccomp: a BPF deny list. JAX needs most of the system call table (threads, mmap, futexes, files), so
# this forbids what a submission must never do: sockets, new processes, exec, ptrace, signals to others,
# namespaces, mounts, kernel interfaces that bypass seccomp (io_uring) and the like.

AUDIT_ARCH_X86_64 = 0xC000003E
CLONE_THREAD = 0x00010000
CLONE_NEW_ANY = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
RET_KILL_PROCESS, RET_ALLOW = 0x80000000, 0x7FFF0000
LD_ABS_W, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06

DENIED_X86_64 = {
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
}
SELF_PID_ARG0_X86_64 = {62: "kill", 234: "tgkill", 129: "rt_sigqueueinfo", 297: "rt_tgsigqueueinfo"}
SYS_CLONE, SYS_CLONE3 = 56, 435


def _insn(code, jt, jf, k):
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def seccomp_program(pid):
    """The filter as raw BPF, for x86-64. ``pid`` is this process: the only one it may signal."""
    eperm, enosys = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    prog = [_insn(LD_ABS_W, 0, 0, 4),  # seccomp_data.arch
            _insn(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
            _insn(RET_K, 0, 0, RET_KILL_PROCESS),
            _insn(LD_ABS_W, 0, 0, 0),  # seccomp_data.nr
            _insn(JGE_K, 0, 1, 0x40000000),  # the x32 ABI: a second table of the same calls
            _insn(RET_K, 0, 0, eperm)]
    for nr in sorted(DENIED_X86_64):
        prog += [_insn(JEQ_K, 0, 1, nr), _insn(RET_K, 0, 0, eperm)]
    prog += [_insn(JEQ_K, 0, 1, SYS_CLONE3), _insn(RET_K, 0, 0, enosys)]  # flags unreadable: libc falls back to clone
    prog += [_insn(JEQ_K, 0, 5, SYS_CLONE), _insn(LD_ABS_W, 0, 0, 16),  # args[0] (flags), low word
             _insn(JSET_K, 2, 0, CLONE_NEW_ANY), _insn(JSET_K, 0, 1, CLONE_THREAD),
             _insn(RET_K, 0, 0, RET_ALLOW), _insn(RET_K, 0, 0, eperm)]
    for nr in sorted(SELF_PID_ARG0_X86_64):
        prog += [_insn(JEQ_K, 0, 4, nr), _insn(LD_ABS_W, 0, 0, 16),  # args[0]: the target pid
                 _insn(JEQ_K, 0, 1, pid), _insn(RET_K, 0, 0, RET_ALLOW), _insn(RET_K, 0, 0, eperm)]
    prog.append(_insn(RET_K, 0, 0, RET_ALLOW))
    return prog


def install_seccomp():
    """Install the filter on every thread of this process. Returns a description or raises OSError."""
    import platform
    if not sys.platform.startswith("linux") or platform.machine() != "x86_64":
        raise OSError(errno.ENOSYS, "the seccomp filter is written for x86-64 only")
    prog = seccomp_program(os.getpid())
    filt = ctypes.create_string_buffer(b"".join(prog), 8 * len(prog))
    fprog = struct.pack("=HxxxxxxQ", len(prog), ctypes.addressof(filt))
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    set_no_new_privs()
    _syscall(SYS_SECCOMP, 1, 1, fbuf)  # SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC
    return "seccomp: no sockets, processes, exec, ptrace, System V IPC or signals to others (%d instructions)" % len(prog)


# ----------------------------------------------------------------------------------------------------
# Resource limits.

def apply_rlimits(limits):
    """CPU, address space, file size, open files; never a core dump."""
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
    cap(resource.RLIMIT_MSGQUEUE, 0)
    cap(resource.RLIMIT_MEMLOCK, 0)


# ----------------------------------------------------------------------------------------------------
# The two steps the child calls.

def before_import(scratch):
    """Start-up lockdown, while the process has one thread. Returns {layer: description or error}."""
    report = {}
    report["privileges"] = _attempt(drop_privileges)
    report["landlock"] = _attempt(restrict_filesystem, scratch)
    return report


def before_learner(limits):
    """Lockdown after the job is read, before learner code. Returns {layer: description or error}."""
    report = {}
    report["rlimits"] = _attempt(lambda: apply_rlimits(limits) or "cpu, memory, file size, files, no core")
    report["seccomp"] = _attempt(install_seccomp)
    return report


def _attempt(fn, *args):
    try:
        return {"ok": True, "detail": fn(*args)}
    except OSError as exc:
        return {"ok": False, "detail": "%s: %s" % (type(exc).__name__, exc)}
