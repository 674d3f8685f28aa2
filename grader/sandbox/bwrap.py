"""bubblewrap around a sandboxed process: new PID, network, IPC, UTS (and cgroup) namespaces, a read-only view
of only the Python installation, ``/usr`` and this package's ``inside/`` folder, a size-capped tmpfs scratch
folder, ``--die-with-parent`` and ``--new-session``.

As root bubblewrap runs privileged (no user namespace), keeping only the capabilities the fork server needs
to give each worker a uid of its own (``inside/identity.py``); as another user it needs unprivileged user
namespaces. ``JAXPLAY_BWRAP=0`` turns it off (for debugging). Because ``--die-with-parent`` follows the
thread that started bubblewrap, start sandboxes from a long-lived thread.
"""
from __future__ import annotations

import ast
import functools
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

from grader import pysource
from grader.sandbox.inside import identity

INSIDE_SOURCE = Path(__file__).resolve().parent / "inside"
INSIDE = "/jaxplay"
"""Where the sandbox's own files appear inside bubblewrap: ``/jaxplay/sandbox`` (the ``inside/`` folder) and
the payload with its companions (``companions``, ``inside_path``); nothing else of the application does."""
APP_ROOT = Path(__file__).resolve().parents[2]
SCRATCH_BYTES = 64 << 20
"""Size of the tmpfs scratch folder of one sandboxed process (the parent watches the folder's size too)."""


def bwrap_path() -> str | None:
    if os.environ.get("JAXPLAY_BWRAP", "1") == "0":
        return None
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


def python_roots() -> list[str]:
    """Folders the sandboxed Python reads: its prefixes and site-packages (never the application's folder,
    nor one above it)."""
    roots = [sys.base_prefix, sys.prefix, sys.exec_prefix, *site.getsitepackages()]
    out: list[str] = []
    for r in roots:
        real = os.path.realpath(r)
        if os.path.isdir(real) and not any(real == o or real.startswith(o + "/") for o in out):
            out = [o for o in out if not o.startswith(real + "/")] + [real]
    app = str(APP_ROOT)
    return [r for r in out if not (app == r or app.startswith(r + "/"))]


CPUS = "/sys/devices/system/cpu"
"""Shown read-only in the sandbox (the CPUs' list and caches): see ``bwrap_args``."""


def _dirs_for(path: str, made: set[str]) -> list[str]:
    """``--dir`` arguments for the parents of ``path``, world-searchable (a root-only ``/root`` is not)."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for i in range(len(parts)):
        d = "/" + "/".join(parts[: i + 1])
        if d in ("/usr", "/tmp") or d.startswith("/usr/") or d in made:
            continue
        made.add(d)
        args += ["--perms", "0755", "--dir", d]
    return args


def bwrap_args(scratch: str, payload: Path | None = None, size: int = SCRATCH_BYTES,
               scratch_perms: str = "1777") -> list[str]:
    """bubblewrap's part of a sandboxed command line (ends with ``--``); ``scratch`` is a tmpfs of ``size``.

    Order matters: a later mount hides what an earlier one put beneath it, so ``/proc``, ``/dev`` and the
    tmpfs ``/tmp`` come first, and Python is bound after them (a virtual environment in ``/tmp`` stays
    visible)."""
    args = [bwrap_path() or "bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if os.geteuid() == 0:  # privileged: no user namespace needed; workers each become a user of their own
        args += ["--cap-drop", "ALL"]
        held = identity.permitted()  # bubblewrap 0.8 answers a request for a capability it lacks with all the rest
        for cap in identity.FORK_SERVER_CAPS:
            if cap in held:
                args += ["--cap-add", "CAP_" + identity.CAP_NAMES[cap].upper()]
    else:
        args += ["--unshare-user", "--disable-userns"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for f in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        args += ["--ro-bind-try", f, f]
    # The CPUs' list and caches, read-only: libtpu's allocator (tcmalloc) aborts when it cannot read how many
    # CPUs there are (a TPU cost target, grader/cost/targets.py); Landlock lets the same folder be read.
    made: set[str] = set()
    if os.path.isdir(CPUS):
        args += _dirs_for(CPUS + "/x", made) + ["--ro-bind", CPUS, CPUS]
    for root in python_roots():
        if not (root == "/usr" or root.startswith("/usr/")):
            args += _dirs_for(root + "/x", made) + ["--ro-bind", root, root]
    args += ["--perms", "0755", "--dir", INSIDE, "--ro-bind", str(INSIDE_SOURCE), f"{INSIDE}/sandbox"]
    if payload is not None:
        for path in (payload, *companions(payload)):
            args += ["--ro-bind", str(path), inside_path(payload, path)]
    args += _dirs_for(scratch, made)
    args += ["--size", str(size), "--perms", scratch_perms, "--tmpfs", scratch, "--chdir", scratch, "--"]
    return args


def companions(payload: Path) -> list[Path]:
    """Files a payload loads from its own folder (or a folder below it), or from a sibling folder, named at
    its top level as ``COMPANIONS = ("helper.py", "sub/helper.py", "../shared/format.py", ...)`` (read without
    running it): bubblewrap shows them at the same places relative to the payload, and nothing else of the
    folders (``inside_path``)."""
    try:
        tree = pysource.parse(payload.read_text())
    except (OSError, SyntaxError, ValueError):
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["COMPANIONS"]:
            try:
                names = ast.literal_eval(node.value)
            except ValueError:
                return []
            return [Path(os.path.normpath(payload.parent / n)) for n in names
                    if isinstance(n, str) and n.endswith(".py") and _allowed(payload, n)
                    and (payload.parent / n).is_file()]
    return []


def _allowed(payload: Path, name: str) -> bool:
    """``helper.py`` or ``sub/helper.py`` (a plain path below the payload's folder: no ``..``, not absolute),
    or ``../shared/format.py`` (one ``..`` into a sibling folder, never back into the payload's own)."""
    if name.startswith("../"):
        rest = name[3:]
        return _inside_folder(rest) and "/" in rest and rest.split("/")[0] != payload.parent.name
    return _inside_folder(name)


def _inside_folder(name: str) -> bool:
    parts = name.split("/")
    return not name.startswith("/") and all(p and p not in (".", "..") for p in parts)


def inside_path(payload: Path, path: Path) -> str:
    """Where ``path`` (the payload or a companion) appears inside bubblewrap: under ``INSIDE`` at its place
    relative to the payload's folder, or to that folder's parent when a companion is in a sibling folder
    (``/jaxplay/learner/child.py`` beside ``/jaxplay/boundary/program.py``)."""
    root = payload.parent
    if any(not c.is_relative_to(payload.parent) for c in companions(payload)):
        root = payload.parent.parent
    return f"{INSIDE}/{Path(path).relative_to(root)}"


@functools.lru_cache(maxsize=1)
def bwrap_works() -> tuple[bool, str]:
    """Whether bubblewrap can start this Python here, with every folder it reads visible (checked once)."""
    path = bwrap_path()
    if path is None:
        return False, ("turned off by JAXPLAY_BWRAP=0" if os.environ.get("JAXPLAY_BWRAP", "1") == "0"
                       else "bwrap is not installed (Debian package `bubblewrap`)")
    roots = python_roots()
    check = ("import os, sys; missing = [p for p in sys.argv[1:] if not os.path.isdir(p)]; "
             "print('missing: ' + ', '.join(missing) if missing else 'ok')")
    cmd = bwrap_args("/tmp/jaxplay-bwrap-probe") + [sys.executable, "-I", "-c", check, *roots]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20, env={"PATH": "/usr/bin:/bin"},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return False, f"bwrap cannot start Python in a sandbox here ({why})"
    if done.stdout.strip() != "ok":
        return False, f"inside bwrap Python cannot see what it reads ({done.stdout.strip()})"
    mode = ("privileged (as root)" if os.geteuid() == 0 else "unprivileged user namespace")
    return True, f"{path}, {mode}: new pid/net/ipc/uts namespaces, read-only view, tmpfs scratch"


def use_bwrap() -> bool:
    return bwrap_works()[0]


def command(mode: str, args: list[str], payload: Path, scratch: str, size: int = SCRATCH_BYTES,
            scratch_perms: str = "1777") -> list[str]:
    """``python -I -B inside/entry.py MODE *ARGS PAYLOAD``, inside bubblewrap when it works here. ``-I`` ignores
    every PYTHON* variable, so ``-B`` is what keeps Python from writing bytecode next to the grader's files."""
    payload = Path(payload).resolve()
    if not use_bwrap():
        return [sys.executable, "-I", "-B", str(INSIDE_SOURCE / "entry.py"), mode, *args, str(payload)]
    return (bwrap_args(scratch, payload, size, scratch_perms)
            + [sys.executable, "-I", "-B", f"{INSIDE}/sandbox/entry.py", mode, *args, inside_path(payload, payload)])


def is_wrapped(cmd: Any) -> bool:
    """Whether a command line starts with bubblewrap."""
    return isinstance(cmd, (list, tuple)) and bool(cmd) and os.path.basename(str(cmd[0])) == "bwrap"
