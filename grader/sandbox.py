"""The isolation layers around a child, seen from the parent: bubblewrap, and what the kernel offers.

Layers (each covers the others' gaps):

- **bubblewrap** (``/usr/bin/bwrap``), when it works here: new PID/network/IPC/UTS namespaces, a minimal
  read-only view (the Python prefix, ``/usr``, the loader cache), a size-capped tmpfs scratch folder,
  ``--die-with-parent``, ``--new-session``. As root it runs privileged and the child drops to ``nobody``;
  as another user it needs unprivileged user namespaces.
- **Landlock**, **seccomp**, **rlimits**, **privileges**: applied by the child to itself (``lockdown.py``).

``probe()`` says which layers work (for ``python -m grader doctor`` and the app's sidebar).
``JAXPLAY_REQUIRE_SANDBOX=1`` makes grading refuse to run code unless Landlock, seccomp and the resource
limits work; ``JAXPLAY_REQUIRE_SANDBOX=all`` also requires bubblewrap. ``JAXPLAY_BWRAP=0`` turns bubblewrap
off (for debugging).
"""
from __future__ import annotations

import functools
import os
import platform
import shutil
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

from grader import lockdown

SCRATCH_BYTES = 64 << 20
"""Size of the tmpfs scratch folder under bubblewrap (the parent watches the folder's size otherwise)."""
INSIDE = "/jaxplay"
"""Where the child's files appear inside bubblewrap; nothing else of the app does."""
CHILD_FILES = ("child.py", "cost_child.py", "counterfactual.py", "jaxpr_numpy.py", "lockdown.py", "tamper.py", "zygote.py")
HERE = Path(__file__).resolve().parent
PROBE_JOB = {"code": "def f():\n    return 0\n", "entry": "f", "args": [], "cases": []}
"""The job ``probe(deep=True)`` runs to see which layers a child (and a forked worker) applies to itself."""
ALWAYS = ("landlock", "seccomp", "rlimits")
"""The layers ``JAXPLAY_REQUIRE_SANDBOX=1`` requires: they need no privilege, only a recent kernel."""


def requirement() -> str:
    """``""`` (run without layers, with a note), ``"1"`` (require Landlock, seccomp, rlimits) or ``"all"``."""
    value = os.environ.get("JAXPLAY_REQUIRE_SANDBOX", "").strip().lower()
    return "" if value in ("", "0", "no", "false") else ("all" if value == "all" else "1")


def bwrap_path() -> str | None:
    if os.environ.get("JAXPLAY_BWRAP", "1") == "0":
        return None
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


def _python_roots() -> list[str]:
    """Folders the child's Python reads: its prefixes and site-packages (never the app's folder)."""
    roots = [sys.base_prefix, sys.prefix, sys.exec_prefix, *site.getsitepackages()]
    out: list[str] = []
    for r in roots:
        real = os.path.realpath(r)
        if os.path.isdir(real) and not any(real == o or real.startswith(o + "/") for o in out):
            out = [o for o in out if not o.startswith(real + "/")] + [real]
    app = str(HERE.parent)
    return [r for r in out if not (app == r or app.startswith(r + "/"))]


def _dirs_for(path: str, made: set[str]) -> list[str]:
    """``--dir`` arguments for the parents of ``path``, world-searchable (a root-only ``/root`` is not)."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for i in range(len(parts)):
        d = "/" + "/".join(parts[: i + 1])
        if d in ("/usr",) or d.startswith("/usr/") or d in made:
            continue
        made.add(d)
        args += ["--perms", "0755", "--dir", d]
    return args


def bwrap_args(scratch: str, size: int = SCRATCH_BYTES) -> list[str]:
    """bubblewrap's part of the child's command line (ends with ``--``); ``scratch`` is a tmpfs of ``size``."""
    args = [bwrap_path() or "bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if os.geteuid() == 0:  # privileged: no user namespace needed; the child becomes nobody (lockdown.py)
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--disable-userns"]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for f in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        args += ["--ro-bind-try", f, f]
    made: set[str] = set()
    for root in _python_roots():
        if not (root == "/usr" or root.startswith("/usr/")):
            args += _dirs_for(root + "/x", made) + ["--ro-bind", root, root]
    args += ["--perms", "0755", "--dir", INSIDE]
    for name in CHILD_FILES:
        args += ["--ro-bind", str(HERE / name), f"{INSIDE}/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    args += _dirs_for(scratch, made)
    args += ["--size", str(size), "--perms", "1777", "--tmpfs", scratch, "--chdir", scratch, "--"]
    return args


@functools.lru_cache(maxsize=1)
def bwrap_works() -> tuple[bool, str]:
    """Whether bubblewrap can start this Python with the namespaces the child gets (checked once)."""
    path = bwrap_path()
    if path is None:
        return False, "bwrap not found (Debian package `bubblewrap`)" if os.environ.get("JAXPLAY_BWRAP", "1") != "0" \
            else "turned off by JAXPLAY_BWRAP=0"
    probe_dir = "/tmp/jaxplay-bwrap-probe"
    cmd = bwrap_args(probe_dir) + [sys.executable, "-I", "-c", "import os; print(os.getpid())"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20, env={"PATH": "/usr/bin:/bin"},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return False, f"bwrap cannot create the sandbox here ({why})"
    mode = "privileged (as root; the child becomes nobody)" if os.geteuid() == 0 else "unprivileged user namespace"
    return True, f"{path}, {mode}: new pid/net/ipc/uts namespaces, read-only view, tmpfs scratch"


def use_bwrap() -> bool:
    return bwrap_works()[0]


def wrap_child(python: str, script: Path, args: list[str], scratch: str, size: int = SCRATCH_BYTES) -> list[str]:
    """The child's (or the fork server's) command line, inside bubblewrap when it works here. ``-I`` ignores
    every PYTHON* variable, so ``-B`` is what keeps the child from writing bytecode next to the grader's files."""
    if not use_bwrap():
        return [python, "-I", "-B", str(script), *args]
    return bwrap_args(scratch, size) + [python, "-I", "-B", f"{INSIDE}/{script.name}", *args]


def is_wrapped(command: Any) -> bool:
    """Whether a child's command line starts with bubblewrap."""
    return isinstance(command, (list, tuple)) and bool(command) and os.path.basename(str(command[0])) == "bwrap"


def child_env_extra() -> dict[str, str]:
    """Variables the child's lockdown reads: whether to become nobody, whether layers are required."""
    env = {}
    if use_bwrap() and os.geteuid() == 0:
        env["JAXPLAY_DROP_UID"] = str(lockdown.NOBODY)
    if requirement():
        env["JAXPLAY_REQUIRE_SANDBOX"] = requirement()
    return env


def _seccomp_status() -> tuple[bool, str]:
    if platform.machine() != "x86_64":
        return False, f"the filter is written for x86-64; this machine is {platform.machine()}"
    try:
        with open("/proc/self/status") as f:
            if "Seccomp:" not in f.read():
                return False, "the kernel has no seccomp"
    except OSError:
        return False, "cannot read /proc/self/status"
    return True, "BPF filter: no sockets, fork/exec, ptrace, signals to others, namespaces, io_uring, System V IPC"


def probe(deep: bool = False) -> dict[str, Any]:
    """Which layers work here: ``{"layers": {name: {"ok", "detail"}}, "required", "ready", "note"}``.

    Cheap by default (the kernel's features and one bubblewrap start, cached). ``deep=True`` runs a real
    child and reports what it applied to itself, which is what ``doctor`` shows.
    """
    abi = lockdown.landlock_abi()
    layers = {
        "bubblewrap": dict(zip(("ok", "detail"), bwrap_works())),
        "landlock": {"ok": abi >= 1, "detail": f"ABI {abi}" if abi else "not available in this kernel"},
        "seccomp": dict(zip(("ok", "detail"), _seccomp_status())),
        "rlimits": {"ok": True, "detail": "CPU time, address space, file size, open files, no core dumps"},
    }
    if deep:
        from grader.runner import Limits, run_job
        outcome = run_job(PROBE_JOB, Limits(wall_s=60))
        child_layers = (outcome.result or {}).get("sandbox")
        if not child_layers:
            layers["child"] = {"ok": False, "detail": f"the test child gave no report ({outcome.result_error or outcome.exit_code})"}
        else:
            for name, v in child_layers.items():
                layers[name] = {"ok": bool(v.get("ok")), "detail": str(v.get("detail"))}
    need = missing(layers)
    req = requirement()
    info = {"layers": layers, "required": req, "ready": not need, "missing": need, "note": _note(layers, need, req)}
    if deep:
        info["workers"] = _workers_status({name: v["ok"] for name, v in layers.items()})
    return info


def _workers_status(cold: dict[str, bool]) -> dict[str, Any]:
    """How the pool starts workers here: forked by a fork server (checked by running a job in one, which must
    have every layer a new child has: ``cold``), or each as a new process, and why."""
    if os.environ.get("JAXPLAY_FORKSERVER", "1") == "0":
        return {"forked": False, "detail": "each worker is a new process (JAXPLAY_FORKSERVER=0)"}
    import time
    from grader.forkserver import ForkServer, ForkServerError
    from grader.runner import Limits, supervise, with_limits
    try:
        server = ForkServer()
    except (ForkServerError, OSError) as exc:
        return {"forked": False, "detail": f"each worker is a new process: the fork server cannot start ({exc})"}
    try:
        started = time.monotonic()
        child = server.spawn()
        outcome = supervise(child, with_limits(PROBE_JOB, Limits(wall_s=60)), Limits(wall_s=60), started)
        shutil.rmtree(child.scratch, ignore_errors=True)
        layers = (outcome.result or {}).get("sandbox") or {}
        off = [name for name, v in layers.items() if cold.get(name) and not v.get("ok")]
        if not layers or off:
            return {"forked": False, "detail": "each worker is a new process: a forked worker "
                    + (f"lacked {', '.join(off)}, which a new process has" if layers else f"gave no report ({outcome.result_error or outcome.exit_code})")}
        return {"forked": True, "detail": f"forked by a fork server with JAX imported; a worker ran a job in "
                                          f"{outcome.elapsed_s:.2f} s with every layer the child has"}
    except ForkServerError as exc:
        return {"forked": False, "detail": f"each worker is a new process: the fork server cannot fork ({exc})"}
    finally:
        server.shutdown()


def missing(layers: dict[str, dict[str, Any]]) -> list[str]:
    """Required layers that do not work (none when nothing is required)."""
    req = requirement()
    if not req:
        return []
    names = list(ALWAYS) + (["bubblewrap"] if req == "all" else []) + ["child", "privileges"]
    return [n for n in names if n in layers and not layers[n]["ok"]]


def _note(layers: dict[str, dict[str, Any]], need: list[str], req: str) -> str:
    off = [n for n, v in layers.items() if not v["ok"]]
    if need:
        return ("This server requires the sandbox (JAXPLAY_REQUIRE_SANDBOX=%s) but these layers do not work: %s. "
                "Code will not be run." % (req, ", ".join(need)))
    if off:
        return "Running with fewer isolation layers (missing: %s). Fine on your own machine; do not host it like this." \
            % ", ".join(off)
    return "All isolation layers work."


def refusal() -> str | None:
    """Why code must not run here (the requirement is set and layers are missing), or None."""
    if not requirement():
        return None
    info = probe()
    return None if info["ready"] else info["note"]
