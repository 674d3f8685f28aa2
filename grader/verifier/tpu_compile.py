""""Compiles for a TPU v5e": a Pallas problem's kernel compiled ahead of time for a v5e, on the trusted side.

The child traces the learner's function once more at the problem's realistic size (``tpu_compile`` in
``problem.toml``; shapes only, nothing runs) and hands the program over as data, like every traced program.
A helper process of the grader's (never the child: a child could write "compiled") rebuilds that data with
the verifier's allow-list (``rebuild.Rebuilder(interpret=False)``: the ``pallas_call`` lowers through Mosaic,
not interpret mode) and compiles it with libtpu for one chip of a ``v5e:2x2`` topology, which needs no TPU
(``grader/cost/targets.py``). The record it answers is what the requirement row reads
(``grader/toolkit/pallas.py``):

    {"status": "compiled", "peak_bytes", "flops", "bytes_accessed", "seconds", "kernel"}
    {"status": "refused", "message": Mosaic's message cut to what a learner needs, "kind": "tiling" | "vmem" | ...}
    {"status": "not_checked", "message": why (libtpu not installed, the program could not be traced)}

``flops`` and ``bytes_accessed`` are XLA's cost analysis, which counts nothing inside a Mosaic kernel (only
the work around it); ``kernel`` is what the kernels move between HBM and VMEM and compute, counted from their
grid and blocks (``grader/cost/kernel_model.py``), which a Pallas problem's Cost tab shows.

Without the TPU extra nothing is compiled and the record says so: the row is "not checked", never passed.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import sys
import threading
import time
from typing import Any

from grader.grading.helpers import HelperPool

TARGET = "tpu-v5e"
COMPILE_BUDGET_S = 120.0
"""One compile's wall-clock limit (a blocked matmul compiles in about 3 s on two busy cores)."""
HELPER_ADDRESS_SPACE = 16 << 30
"""libtpu maps about 2.3 GB and reserves more (the cost child's TPU limit is 12 GiB)."""
MESSAGE_CHARS = 600


class CompileHelperBroke(RuntimeError):
    """The compile helper failed: the grader's fault, never the learner's."""


MAX_HELPERS = 2
"""TPU compile helpers alive at once: each holds libtpu (hundreds of MB) and a compile takes seconds of CPU, so
several Pallas Submits at once queue for two helpers instead of starting one each (``HelperPool``'s limit)."""
_helpers = HelperPool("grader.verifier.tpu_compile:serve", CompileHelperBroke, "TPU compile process", idle=1,
                      answers=50, limit=MAX_HELPERS)
shutdown = _helpers.shutdown
_cache: dict[str, dict[str, Any]] = {}

"""Records by the program data's digest: a gallery's many submissions of one reference compile once."""


def extra_missing() -> str | None:
    """Why nothing can be compiled for a TPU here (the extra is not installed), or None."""
    from grader.cost.targets import tpu_extra
    ok, sentence = tpu_extra()
    return None if ok else sentence


def not_on_this_server(why: str) -> dict[str, Any]:
    """The one record of a row the grader could not check that still lets a verdict be Accepted: this server has
    no TPU compiler (the extra is not installed, or it cannot start here), which the verdict says."""
    return {"status": "not_checked", "server": True, "message": f"Not checked on this server: {why}. Install "
            "requirements-tpu.txt (libtpu) where the grader runs to check it."}


def failed(message: str) -> dict[str, Any]:
    """A record of a compile that did not give a verdict of Mosaic's (out of time or memory, a program the
    helper cannot rebuild): the row fails, with the reason; never "not checked", so never Accepted."""
    return {"status": "failed", "message": message}


def compile_record(program: Any, budget_s: float = COMPILE_BUDGET_S, memory_bytes: int | None = None) -> dict[str, Any]:
    """The record for one traced program's data (see the module's docstring), compiled within ``budget_s``
    seconds (what is left of the run's time) and ``memory_bytes`` more resident memory than the helper held
    before (the run's memory limit)."""
    missing = extra_missing()
    if missing:
        return not_on_this_server(missing)
    key = hashlib.sha256(json.dumps(program, sort_keys=True).encode()).hexdigest()
    if key in _cache:
        return dict(_cache[key])
    if budget_s <= 0:
        return failed("The TPU compile did not start: this run's time limit was spent before it.")
    try:
        helper = _helpers.take(deadline=time.monotonic() + budget_s)
        helper.wait_ready()
    except TimeoutError:
        return failed("The TPU compile did not start within this run's time limit: the server's TPU compilers "
                      "were busy with other kernels. Submit again in a moment.")
    except (OSError, ValueError, CompileHelperBroke) as exc:
        return not_on_this_server(f"the TPU compiler could not start ({str(exc)[:200]})")
    over, done = threading.Event(), threading.Event()
    if memory_bytes:
        _helpers.watch(helper, done, memory_limit=memory_bytes, over=over, growth=True)
    try:
        answer = helper.ask(json.dumps({"program": program}).encode(), time.monotonic() + budget_s)
    except TimeoutError:
        helper.kill()
        if over.is_set():
            return failed(_OVER_MEMORY % (memory_bytes / (1 << 30)))
        return failed("The TPU compile did not finish within this run's time limit (%.0f s left for it): Mosaic "
                      "was still working on your kernel. Smaller blocks or fewer operations per step compile "
                      "faster." % budget_s)
    except (OSError, ValueError, CompileHelperBroke) as exc:
        helper.kill()
        if over.is_set():
            return failed(_OVER_MEMORY % (memory_bytes / (1 << 30)))
        return failed(f"The TPU compile stopped before it gave a verdict ({str(exc)[:200]}).")
    finally:
        done.set()
    if over.is_set():
        helper.kill()
        return failed(_OVER_MEMORY % (memory_bytes / (1 << 30)))
    _helpers.give_back(helper)
    record = answer.get("record") if isinstance(answer, dict) else None
    if not isinstance(record, dict):
        return failed("The TPU compile stopped before it gave a verdict (%s)."
                      % str(answer.get("error", "no answer") if isinstance(answer, dict) else "no answer")[:300])
    if record.get("status") in ("compiled", "refused"):
        _cache[key] = dict(record)
    return record


_OVER_MEMORY = ("The TPU compile needed more memory than this run may use (%.1f GiB), and was stopped: Mosaic "
                "was planning a kernel too large for the server.")


# -- the helper's side --------------------------------------------------------------------------------

def _device() -> Any:
    from grader.cost.targets import TARGETS
    from grader.learner.cost_child import TPU_ENV, _topology_device
    for k, v in TPU_ENV.items():
        os.environ[k] = v
    return _topology_device(TARGETS[TARGET].job())


def compile_on(device: Any, program: Any) -> dict[str, Any]:
    """Rebuild ``program`` (data) for Mosaic and compile it for ``device``; the record."""
    import jax
    from jax.extend import core as jcore

    from grader.verifier.rebuild import NotRebuildable, Rebuilder
    try:
        closed = Rebuilder(interpret=False).program(program)
    except NotRebuildable as exc:
        return failed(f"The grader could not rebuild the program it compiles for a TPU ({exc}), so your kernel "
                      "was not compiled: write it with JAX's own operations only.")
    from grader.verifier.kernel_signature import signature
    try:
        kernels = signature(closed)
    except Exception as exc:  # noqa: BLE001 - the graded kernel cannot be told from another: the row fails
        return failed(f"The grader could not read the kernel it compiles for a TPU ({type(exc).__name__}).")
    sharding = jax.sharding.SingleDeviceSharding(device)
    args = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype, sharding=sharding) for v in closed.jaxpr.invars]
    started = time.monotonic()
    try:
        # The chip as the default device too: Pallas reads the default device's kind while lowering some
        # blocks (a 1-D block asks how many lanes a vreg has), and this machine's default is its CPU
        # ("Unsupported TPU device kind: cpu" for a kernel a v5e compiles).
        with jax.default_device(device):
            compiled = jax.jit(jcore.jaxpr_as_fun(closed)).lower(*args).compile()
    except Exception as exc:  # noqa: BLE001 - Mosaic or XLA refused the program: the learner's to read
        text = str(exc)
        return {"status": "refused", "kind": refusal_kind(text), "message": cut(text), "kernels": kernels}
    record: dict[str, Any] = {"status": "compiled", "seconds": round(time.monotonic() - started, 2),
                              "kernels": kernels}
    try:
        mem = compiled.memory_analysis()
        record["peak_bytes"] = int(getattr(mem, "peak_memory_in_bytes", 0) or 0)
    except Exception:  # noqa: BLE001 - figures are a bonus
        pass
    try:
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        record["flops"] = float(cost.get("flops", 0.0))
        record["bytes_accessed"] = float(cost.get("bytes accessed", 0.0))
    except Exception:  # noqa: BLE001
        pass
    try:
        from grader.cost.kernel_model import kernel_figures
        kernel = kernel_figures(closed)
        if kernel is not None:
            record["kernel"] = kernel
    except Exception as exc:  # noqa: BLE001 - a figure of the Cost tab, never the row's verdict
        record["kernel_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return record


_KINDS = (
    ("tiling", re.compile(r"divisible by 8 and 128|block shape|tiling|tile", re.I)),
    ("vmem", re.compile(r"vmem|scoped memory|exceed.{0,40}memory|RESOURCE_EXHAUSTED", re.I)),
    ("layout", re.compile(r"layout|relayout|shape cast|reshape", re.I)),
)


def refusal_kind(text: str) -> str:
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return "other"


_NOISE = re.compile(r"^\s*(Traceback|File \"|The above exception|--------|For simplicity|jax\._src|\s*at |"
                    r"Additional diagnostics|Diagnostics)", re.I)


def cut(text: str) -> str:
    """Mosaic's (or XLA's) message without the Python stack, the MLIR dump and the repeated boilerplate: the
    lines a learner acts on, at most ``MESSAGE_CHARS``."""
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if not s or _NOISE.match(line) or s.startswith(("%", "^", "module", "func.func", "}", "#loc", "loc(")):
            continue
        s = re.sub(r"\s*loc\(.*\)$", "", s)
        s = re.sub(r"(/[\w.\-]+)+/site-packages/", "", s)
        if s not in lines:
            lines.append(s)
        if sum(len(x) for x in lines) > MESSAGE_CHARS:
            break
    out = " ".join(lines)
    out = re.sub(r"Blocked\(block_size=(\d+)\)", r"\1", out)
    out = re.sub(r"Squeezed\(\)", "None", out)
    out = re.sub(r",? and index_map \{ lambda .*?\}", "", out)
    out = re.sub(r" while allocating on stack for %\S+ = .*?metadata=\{[^}]*\}\.", ".", out)
    out = re.sub(r"\s*It should not be possible to run out of scoped vmem.*$", "", out)
    out = re.sub(r"RESOURCE_EXHAUSTED: E\d+: CompileTimeScopedVmemOom: ", "", out)
    out = out.replace("pallas_call <the verifier>", "your pallas_call").replace("<the verifier>", "your program")
    # Python's reprs in plain words (issue 46): "in memory space <MemorySpace.DEFAULT: 'default'>" -> "in the
    # default memory space"; an enum as its value, a dtype as its name, an object's address left out
    out = re.sub(r"in memory space <\w+\.\w+: '([\w ]+)'>", lambda m: f"in the {m.group(1).replace('_', ' ')} memory space",
                 out)
    out = re.sub(r"<\w+\.(\w+): '([^'<>]*)'>", r"\2", out)
    out = re.sub(r"<\w+\.(\w+): -?\d+>", lambda m: m.group(1).lower(), out)
    out = re.sub(r"dtype\('(\w+)'\)", r"\1", out)
    out = re.sub(r"<function (\w+) at 0x[0-9a-f]+>", r"\1", out)
    out = re.sub(r" at 0x[0-9a-f]+", "", out)
    return out[:MESSAGE_CHARS] + ("..." if len(out) > MESSAGE_CHARS else "")


def serve() -> None:
    """The helper's loop: ``{"program"}`` per line on stdin, ``{"record"}`` per line on stdout."""
    from grader.learner import child
    child.import_jax()  # the same JAX, Pallas imported before any data is read
    device = _device()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = HELPER_ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(HELPER_ADDRESS_SPACE, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # within a host's own limit, where it sets one
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            answer = {"record": compile_on(device, json.loads(line)["program"])}
        except MemoryError:
            answer = {"record": failed("The TPU compile ran out of memory: Mosaic was planning a kernel too large "
                                       "for the server.")}
        except Exception as exc:  # noqa: BLE001 - reported as the grader's own failure
            answer = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()


def attach(job: dict[str, Any], result: Any, tpu_trace: Any = None, budget_s: float = COMPILE_BUDGET_S,
           memory_bytes: int | None = None) -> None:
    """Put the compile record on every traced program of ``result`` (``trace["tpu"]``, which the requirement
    row reads), computed here from the child's ``tpu_trace`` (data) on the trusted side, within what is left of
    the run's time (``budget_s``) and its memory limit (``memory_bytes``). Whatever the child wrote under
    ``tpu`` is dropped first. The record is for the graded kernel only: a program whose kernels are not the
    graded ones at another size (``kernel_signature.differs``) gets a failing record, not its compile."""
    if not isinstance(result, dict):
        return
    sent = result.pop("tpu_trace", None)
    tpu_trace = tpu_trace if tpu_trace is not None else sent
    traces = [t for t in result.get("traces", []) or [] if isinstance(t, dict)]
    for t in traces:
        t.pop("tpu", None)
    if result.get("status") != "ok" or not traces:
        return
    if not job.get("tpu_compile"):
        if job.get("tpu_compile_on_submit"):  # a Run of a Pallas problem: said, not passed
            for t in traces:
                t["tpu"] = {"status": "not_checked", "on_submit": True, "message": "Checked when you submit: a "
                            "Run checks the visible examples only, and the TPU compile takes a few seconds."}
        return
    if isinstance(tpu_trace, dict) and isinstance(tpu_trace.get("program"), dict):
        record = compile_record(tpu_trace["program"], budget_s, memory_bytes)
        if record.get("status") in ("compiled", "refused"):
            other = _other_kernel(job, traces, record.get("kernels"))
            if other:
                record = {"status": "different_kernel", "message": other}
        lines = [n for n in tpu_trace.get("lines", []) or [] if isinstance(n, int) and not isinstance(n, bool)]
        if lines:
            record["lines"] = lines[:8]
    elif isinstance(tpu_trace, dict) and isinstance(tpu_trace.get("error"), str):
        record = {"status": "traced_error", "message": "Your function raised when traced at the realistic size "
                  f"({tpu_trace['error'][:300]}), so it was not compiled for a TPU v5e."}
    else:
        record = failed("Not compiled: the grader got no program traced at the realistic size.")
    for t in traces:
        t["tpu"] = record


def _other_kernel(job: dict[str, Any], traces: list[dict[str, Any]], compiled: Any) -> str | None:
    """A sentence when the kernel compiled for the TPU is not the kernel of every graded program at another
    size, else None (``kernel_signature.differs``, on the records of the two trusted processes)."""
    from grader.verifier.kernel_signature import differs
    names = [a.get("name") for a in job.get("args", [])]
    sizes = (job.get("tpu_compile") or {}).get("args") or []
    facts = {n: (a["value"] if "value" in a else list(a.get("shape", []))) for n, a in zip(names, sizes)
             if isinstance(a, dict)}
    shapes = [a["shape"] for a in sizes if isinstance(a, dict) and isinstance(a.get("shape"), list)]
    where = " x ".join(str(d) for d in shapes[0]) if shapes else "that size"
    # every program a case ran on (the verifier's facts: ``args``), its kernels or none
    graded = [dict(t, kernels=t.get("kernels") or []) for t in traces if isinstance(t.get("args"), dict)]
    if not isinstance(compiled, list) or not graded:
        return ("Not compiled: the grader could not tell whether the kernel it compiled for a TPU is the kernel "
                "it graded, so the row does not hold.")
    for t in graded:
        why = differs(t["kernels"], compiled, t["args"], facts)
        if why:
            return (f"Your function builds a different kernel at the realistic size ({where}) than the one graded "
                    f"on the cases: {why}. The row compiles the graded kernel only; build the same kernel at every "
                    "size, its blocks and grid computed from the sizes.")
    return None
