"""Landlock: what a sandboxed process may reach of the file system, and more, applied to itself.

Read-only: what Python and the payload import (their import paths) and the system libraries; read-write:
its own scratch folder; in ``/proc``, only what a process needs of itself (its status and limits, the
names of its threads and file descriptors), never its mount table, cgroup or network view, which show the
host's (``/proc/self/net`` is per network namespace, not per process, so without bubblewrap it lists the
machine's sockets). With ABI 4+ no TCP bind or connect; with ABI 6+ no signals or abstract unix sockets
outside its own domain (each worker applies its own, so workers cannot signal each other or the fork server).
Must run while the process has one thread: Landlock binds the thread and the threads it starts later.
"""
import ctypes
import errno
import os
import struct
import sys

from . import kernel

FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK, FS_MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR

SYSTEM_READ = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib", "/lib", "/lib64",
               "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
               "/usr/share/zoneinfo", "/sys/devices/system/cpu", "/proc/cpuinfo", "/proc/meminfo",
               "/dev/urandom", "/dev/random", "/dev/zero")
OWN_PROC_FILES = ("stat", "statm", "status", "limits")
"""Files of its own ``/proc`` entry a process may read (XLA and Python read none of them while a job runs;
they are there for learners measuring their own memory). Everything else in ``/proc/self`` is refused."""
OWN_PROC_LISTINGS = ("", "fd", "task")
"""Folders of its own ``/proc`` entry a process may list (names only: no file beneath them is readable)."""


def abi():
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled (or this is not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return kernel.syscall(kernel.SYS_LANDLOCK_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    except OSError:
        return 0


def _fs_handled(version):
    rights = (1 << 13) - 1
    if version >= 2:
        rights |= FS_REFER
    if version >= 3:
        rights |= FS_TRUNCATE
    if version >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def read_paths():
    """Where Python and the payload's imports are read from (their import paths), plus system libraries;
    never the application's folder (this package's grandparent), nor a folder above it, nor one inside it
    but a virtual environment's."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    paths += [p for p in sys.path if p] + list(SYSTEM_READ)
    here = os.path.dirname(os.path.realpath(__file__))
    app_root = os.path.dirname(os.path.dirname(os.path.dirname(here)))  # inside/ -> sandbox/ -> grader/ -> app
    prefixes = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)]
    out = []
    for p in paths:
        real = os.path.realpath(p)
        if not os.path.exists(real) or real == "/":
            continue
        if app_root != "/" and (app_root == real or app_root.startswith(real.rstrip("/") + "/")):
            continue
        inside_app = app_root != "/" and real.startswith(app_root + "/")
        if inside_app and not any(real == q or real.startswith(q + "/") for q in prefixes):
            continue
        if real.startswith("/proc/") and real not in SYSTEM_READ:
            continue  # /proc/self and the like on sys.path: only the rules below open /proc
        if real not in out:
            out.append(real)
    return out


def proc_rules(pid):
    """(path, rights) for the process's own ``/proc`` entry: a few files, a few listings."""
    base = "/proc/%d" % pid
    rules = [(base + ("/" + name if name else ""), FS_READ_DIR) for name in OWN_PROC_LISTINGS]
    rules += [("%s/%s" % (base, name), FS_READ_FILE) for name in OWN_PROC_FILES]
    return rules


def restrict(scratch):
    """Apply Landlock to this thread (and all it starts later). Returns a description or raises OSError."""
    version = abi()
    if version < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available in this kernel")
    handled_fs = _fs_handled(version)
    handled_net = (NET_BIND_TCP | NET_CONNECT_TCP) if version >= 4 else 0
    scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if version >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)[: 8 if version < 4 else 16 if version < 6 else 24]
    abuf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = kernel.syscall(kernel.SYS_LANDLOCK_CREATE_RULESET, abuf, len(attr), 0)
    try:
        write = (READ | FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG
                 | FS_MAKE_SYM | (FS_TRUNCATE if version >= 3 else 0) | (FS_REFER if version >= 2 else 0))
        rules = [(p, READ) for p in read_paths()] + proc_rules(os.getpid())
        rules.append(("/dev/null", FS_READ_FILE | FS_WRITE_FILE | (FS_TRUNCATE if version >= 3 else 0)))
        if scratch and os.path.isdir(scratch) and os.path.realpath(scratch) != "/":
            rules.append((os.path.realpath(scratch), write))
        for path, rights in rules:
            _add_path_rule(ruleset, path, rights & handled_fs)
        kernel.set_no_new_privs()
        kernel.syscall(kernel.SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    extra = (", no TCP" if handled_net else "") + (", signals and abstract sockets scoped" if scoped else "")
    return ("Landlock ABI %d: read-only imports, read-write scratch, of /proc only its own status%s"
            % (version, extra))


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
        kernel.syscall(kernel.SYS_LANDLOCK_ADD_RULE, ruleset, 1, rbuf, 0)  # LANDLOCK_RULE_PATH_BENEATH
    finally:
        os.close(fd)
