"""System calls the standard library does not wrap, through ctypes; x86-64 numbers where they are needed."""
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_KEEPCAPS = 8
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38

SYS_CAPSET = 126
SYS_IOPRIO_SET, SYS_IOPRIO_GET = 251, 252
SYS_SECCOMP = 317
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446


def syscall(*args):
    """``syscall(2)``; raises OSError on failure."""
    res = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if res < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return res


def prctl(option, arg2=0, arg3=0, arg4=0, arg5=0):
    """``prctl(2)``; raises OSError on failure."""
    res = libc.prctl(option, ctypes.c_ulong(arg2), ctypes.c_ulong(arg3), ctypes.c_ulong(arg4),
                     ctypes.c_ulong(arg5))
    if res < 0:
        e = ctypes.get_errno()
        raise OSError(e, "prctl(%d): %s" % (option, os.strerror(e)))
    return res


def set_no_new_privs():
    prctl(PR_SET_NO_NEW_PRIVS, 1)
