"""Which isolation layers work here, for ``python -m grader doctor``, the app's sidebar and ``refusal()``.

``probe()`` is cheap (the kernel's features and one bubblewrap start, cached); ``probe(deep=True)`` runs a
job in a new sandboxed process and in one forked by a fork server, each of which checks from the inside that
every call toward another process is refused and that ``/proc`` hides the host (``inside/selftest.py``), and
reports what it applied to itself.
"""
from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

from grader.sandbox import bwrap, policy, users
from grader.sandbox.cleanup import remove_tree
from grader.sandbox.inside import landlock
from grader.sandbox.outcome import Limits
from grader.sandbox.runner import run_job, supervise, with_limits

ECHO_PAYLOAD = Path(__file__).resolve().parent / "inside" / "echo.py"
"""The payload the deep probe runs when given none."""


def _seccomp_status() -> tuple[bool, str]:
    if platform.machine() != "x86_64":
        return False, f"the filter is written for x86-64; this machine is {platform.machine()}"
    try:
        with open("/proc/self/status") as f:
            if "Seccomp:" not in f.read():
                return False, "the kernel has no seccomp"
    except OSError:
        return False, "cannot read /proc/self/status"
    return True, "BPF filter: no sockets, fork/exec, ptrace, namespaces, io_uring, System V IPC; calls toward " \
                 "other processes refused"


def probe(deep: bool = False, payload: Path | None = None, job: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"layers": {name: {"ok", "detail"}}, "required", "ready", "missing", "note"}`` (and ``"workers"``
    when deep). ``payload`` and ``job`` are what the deep probe runs (by default a payload that only answers)."""
    abi = landlock.abi()
    layers = {
        "bubblewrap": dict(zip(("ok", "detail"), bwrap.bwrap_works())),
        "landlock": {"ok": abi >= 1, "detail": f"ABI {abi}" if abi else "not available in this kernel"},
        "seccomp": dict(zip(("ok", "detail"), _seccomp_status())),
        "rlimits": {"ok": True, "detail": "CPU time, address space, file size, open files, no core dumps"},
        "identity": dict(zip(("ok", "detail"), users.status())),
    }
    layers["memory"] = memory_status(layers)
    layers["priority"] = priority_status()
    if deep:
        payload, job = payload or ECHO_PAYLOAD, dict(job or {}, selftest=True)
        outcome = run_job(payload, job, Limits(wall_s=60))
        child_layers = (outcome.result or {}).get("sandbox")
        if not child_layers:
            layers["child"] = {"ok": False, "detail": "the test child gave no report "
                               f"({outcome.result_error or outcome.exit_code}): {outcome.stderr[-300:]}"}
        else:
            for name, v in child_layers.items():
                layers[name] = {"ok": bool(v.get("ok")), "detail": str(v.get("detail"))}
    need = missing(layers)
    req = policy.requirement()
    info = {"layers": layers, "required": req, "ready": not need, "missing": need, "note": _note(layers, need, req)}
    if deep:
        info["workers"] = _workers_status(payload, job, {name: v["ok"] for name, v in layers.items()})
    return info


def _workers_status(payload: Path, job: dict[str, Any], cold: dict[str, bool]) -> dict[str, Any]:
    """How the pool starts workers here: forked by a fork server (checked by running a job in one, which must
    have every layer a new process has: ``cold``), or each as a new process, and why."""
    if os.environ.get("JAXPLAY_FORKSERVER", "1") == "0":
        return {"forked": False, "detail": "each worker is a new process (JAXPLAY_FORKSERVER=0)"}
    from grader.sandbox.forkserver import ForkServer, ForkServerError
    try:
        server = ForkServer(payload)
    except (ForkServerError, OSError) as exc:
        return {"forked": False, "detail": f"each worker is a new process: the fork server cannot start ({exc})"}
    try:
        started = time.monotonic()
        child = server.spawn()
        outcome = supervise(child, with_limits(job, Limits(wall_s=60)), Limits(wall_s=60), started)
        child.proc.wait()
        remove_tree(child.scratch)
        layers = (outcome.result or {}).get("sandbox") or {}
        off = [name for name, v in layers.items() if cold.get(name) and not v.get("ok")]
        if not layers or off:
            return {"forked": False, "detail": "each worker is a new process: a forked worker "
                    + (f"lacked {', '.join(off)}, which a new process has" if layers
                       else f"gave no report ({outcome.result_error or outcome.exit_code})")}
        return {"forked": True, "detail": f"forked by a fork server with the payload prepared; a worker ran a job "
                                          f"in {outcome.elapsed_s:.2f} s with every layer a new process has",
                "layers": layers}
    except ForkServerError as exc:
        return {"forked": False, "detail": f"each worker is a new process: the fork server cannot fork ({exc})"}
    finally:
        server.shutdown()


def cgroup_memory() -> str:
    """Whether this machine offers a cgroup v2 memory controller, in words (the grader does not use one)."""
    try:
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split(" - ", 1) for line in f if " - cgroup2 " in line]
    except OSError:
        mounts = []
    for left, _ in mounts:
        point = left.split()[4]
        try:
            with open(os.path.join(point, "cgroup.controllers")) as f:
                if "memory" in f.read().split():
                    return f"the cgroup v2 at {point} offers a memory controller; the grader does not use it"
        except OSError:
            continue
    if mounts:
        return "no cgroup v2 memory controller here (cgroup v2 without it; a v1 hierarchy may hold it)"
    return "no cgroup v2 here"


def memory_status(layers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """How every byte a run holds is counted here: what is watched, what is refused, what bounds the rest."""
    refused = layers["seccomp"]["ok"]
    walled = layers["bubblewrap"]["ok"] or layers["landlock"]["ok"]
    detail = ("watched: resident memory of the run's processes and its scratch folder, files it removed but holds "
              "included (killed past the limits); "
              + ("refused: memfd and System V shared memory (seccomp)" if refused
                 else "NOT refused: memfd and System V shared memory (no seccomp): a memfd's pages are counted "
                      "only while the watch sees its descriptor")
              + ("; /dev/shm and /tmp not writable" if walled else "; /dev/shm and /tmp WRITABLE (no bubblewrap "
                 "or Landlock)")
              + "; RLIMIT_AS bounds the rest; " + cgroup_memory())
    return {"ok": refused and walled, "detail": detail}


def priority_status() -> dict[str, Any]:
    """How a long run's priority drop (``pool._lower_priority``) counts against other sessions here."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            autogroups = f.read().strip() == "1"
    except OSError:
        autogroups = False
    has_file = os.path.exists("/proc/self/autogroup")
    if autogroups and not has_file:
        return {"ok": False, "detail": "scheduler autogroups are on but /proc/PID/autogroup is missing: a long "
                "run's nice ranks it only inside its own session"}
    how = ("the nice of its session's autogroup (autogroups on: a thread's nice alone would rank it only inside its "
           "session) and of each thread" if autogroups else "each thread's nice (scheduler autogroups off)")
    return {"ok": True, "detail": f"a run past 3 s drops to nice {_long_run_nice()}: {how}"}


def _long_run_nice() -> int:
    from grader.sandbox.pool import LONG_RUN_NICE
    return LONG_RUN_NICE


def missing(layers: dict[str, dict[str, Any]]) -> list[str]:
    """Required layers that do not work (none when nothing is required)."""
    names = policy.required_layers()
    if not names:
        return []
    names += ["child", "cross_process", "proc", "shared_memory"]  # the deep probe's own findings, when it ran
    return [n for n in names if n in layers and not layers[n]["ok"]]


def _note(layers: dict[str, dict[str, Any]], need: list[str], req: str) -> str:
    off = [n for n, v in layers.items() if not v["ok"]]
    if need:
        return ("This server requires the sandbox (JAXPLAY_REQUIRE_SANDBOX=%s) but these layers do not work: %s. "
                "Code will not be run." % (req, "; ".join(f"{n} ({layers[n]['detail']})" for n in need)))
    if off:
        return ("Some isolation layers are OFF here: %s. Fine on your own machine; do not host it like this."
                % "; ".join(f"{n} ({layers[n]['detail']})" for n in off))
    return "All isolation layers work."


def refusal() -> str | None:
    """Why code must not run here (the requirement is set and layers are missing), or None."""
    if not policy.requirement():
        return None
    info = probe()
    return None if info["ready"] else info["note"]
