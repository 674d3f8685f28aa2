"""The verifier's work on one answer: rebuild each traced program, run it on the cases, probe it.

Runs in the verifier's process (``service.py``), which never imports learner code. The child's answer is
data; from it the verifier keeps only what it cannot compute itself (which case used which traced program,
each equation's line in the learner's file and the JAX entry points on its creation stack, printed text and
errors) and replaces the rest: every case's outputs come from running the rebuilt program with XLA, the
program the checks read is the rebuilt one (serialised again here), and the counterfactual probes run on it.
So the numbers, the structure the checks see and the jaxpr the page shows are one object.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from grader.boundary.program import all_eqns
from grader.boundary.program import kernel_buffers as _kernel_buffers
from grader.boundary.program import kernel_fault as _kernel_fault
from grader.verifier.experiments import Program, run_experiments
from grader.verifier.kernel_signature import signature as kernel_signature
from grader.verifier.partitioned import record as partition_record
from grader.verifier.rebuild import (DROPPED, KernelRefused, NotRebuildable, Rebuilder, _tree, compile_program,
                                     program_digest, run_program)

COMPILE_THREADS = max(1, min(4, os.cpu_count() or 1))
"""XLA compiles a case's programs (one per input shape) side by side: most of a verification's time is
XLA's compile, which runs outside Python's lock, so a Run's three shapes cost about one compile and a half on
two cores instead of three."""
_compilers = ThreadPoolExecutor(COMPILE_THREADS, thread_name_prefix="compile")

TRUSTED_FACTS = ("args", "input_names", "case")
"""What the checks read about a traced program's inputs (``Trace.args``, ``input_names``, ``case``): derived
here from the problem's signature and the case the grader holds, in the order of the program's own inputs."""
HIDDEN_UNRUNNABLE = ("this case's inputs are hidden and never enter your code's process, so only the grader can run "
                     "it, and it cannot run this program: %s")

COPIED = ("source_line", "api", "api_all")
"""Per equation, what only the child could see (its frames) and the verifier copies from the child's view when
the equation is the same primitive at the same place."""


def _fill(tree: Any, leaves: list) -> Any:
    """The output value: ``tree`` (plain containers only, see ``rebuild._tree``) with ``leaves`` in order."""
    it = iter(leaves)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, tuple):
            return tuple(walk(v) for v in node)
        if node is None:
            return None
        return next(it)
    return walk(tree)


def _leaf_count(tree: Any) -> int:
    if isinstance(tree, dict):
        return sum(_leaf_count(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return sum(_leaf_count(v) for v in tree)
    return 0 if tree is None else 1


def _names(t: dict, tree: Any) -> list[str]:
    return t["child"].output_names(t, tree)


def _merge(mine: dict, theirs: Any) -> None:
    """Copy ``COPIED`` from the child's view of a program into the verifier's, equation by equation, where the
    two agree on the primitive (they do unless the child's view was forged; then the lines are left out)."""
    if not isinstance(theirs, dict):
        return
    their_eqns = theirs.get("eqns") if isinstance(theirs.get("eqns"), list) else []
    their_eqns = [e for e in their_eqns if not (isinstance(e, dict) and e.get("primitive") in DROPPED)]
    if len(their_eqns) != len(mine["eqns"]):
        return
    for eqn, other in zip(mine["eqns"], their_eqns):
        if not isinstance(other, dict) or other.get("primitive") != eqn["primitive"]:
            continue
        for key in COPIED:
            value = other.get(key)
            if key == "source_line" and (isinstance(value, int) and not isinstance(value, bool) or value is None):
                eqn[key] = value
            elif key != "source_line" and isinstance(value, list) and all(isinstance(v, str) for v in value):
                eqn[key] = [v[:40] for v in value[:16]]
        subs = other.get("subjaxprs") if isinstance(other.get("subjaxprs"), dict) else {}
        for name, sub in eqn["subjaxprs"].items():
            _merge(sub, subs.get(name))


def kernel_fault(exc: BaseException, closed: Any) -> str | None:
    """A kernel's fault that TPU interpret mode raised while the program ran (a block or slice past its array,
    an output block revisited), said for the learner (``program.kernel_fault``), or None for any other error."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001
        return None
    if isinstance(exc, KernelRefused):
        return text
    if "Out-of-bounds" not in text and "Revisited block" not in text:
        return None
    return _kernel_fault(text, _kernel_buffers(closed))


class PlannedTooLarge(Exception):
    """A compiled program whose planned memory (XLA's memory analysis) is past the run's memory limit."""


def verify(t: dict, job: dict, result: dict, memory_bytes: int | None = None) -> dict:
    """The answer the grader reads: ``result`` (the child's, status ``ok``) with the verifier's outputs, probes
    and programs. ``t`` is the verifier's own ``child.import_jax()`` plus ``t["child"]``, the module. A program
    XLA plans to need more than ``memory_bytes`` for is a memory limit before it runs."""
    try:
        return _verify(t, job, result, memory_bytes)
    except t["child"].AnswerTooLarge as exc:
        return {"status": "output_limit", "message": str(exc)}
    except PlannedTooLarge as exc:
        return {"status": "memory_error", "message": str(exc)}


def planned_bytes(compiled: Any) -> int:
    """What XLA plans a compiled program to hold while it runs: its arguments, results and temporaries
    (buffers shared between them counted once), and its code; 0 when the backend does not say."""
    try:
        m = compiled.memory_analysis()
        return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
                   - m.alias_size_in_bytes + m.generated_code_size_in_bytes)
    except Exception:  # noqa: BLE001 - no analysis on this backend: the resident-memory watch still holds
        return 0


def _check_planned(compiled: Any, memory_bytes: int | None) -> None:
    planned = _planned_once(compiled)
    if memory_bytes and planned > memory_bytes:
        raise PlannedTooLarge("your traced program plans to use %s of memory (XLA's plan, before it ran), more than "
                              "the %g GiB a run may use" % (_size(planned), memory_bytes / 2**30))


def _size(n: int) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20)):
        if n >= 1 << shift:
            return "%.3g %s" % (n / (1 << shift), unit)
    return "%d bytes" % n


def _verify(t: dict, job: dict, result: dict, memory_bytes: int | None) -> dict:
    child = t["child"]
    specs = job["args"]
    static = tuple(i for i, s in enumerate(specs) if s.get("static"))
    cases_in = {c["name"]: c for c in job["cases"]}
    probe_cases = set(job.get("probe_cases", [c["name"] for c in job["cases"]]))
    budget = child.AnswerBudget()
    traces = result.get("traces", [])
    built: list[Any] = []
    for k, trace in enumerate(traces):
        program, out_tree = trace.pop("program", None), trace.pop("out_tree", None)
        trace.pop("opaque", None)
        for key in ("probes", "step_reads", "experiments", "partitioned"):
            trace.pop(key, None)  # the child's own numbers: never read
        try:
            closed = Rebuilder().program(program)
            budget.take_program(t, closed)
            tree = _tree(out_tree, 0)
            if _leaf_count(tree) != len(closed.jaxpr.outvars):
                raise NotRebuildable("the output structure does not match the traced program's results")
            view = child.JaxprSerializer(t, evaluate=True).jaxpr(closed)
            _merge(view, trace.get("jaxpr"))
            names = _names(t, tree)
        except NotRebuildable as exc:
            built.append(str(exc))  # the child's view and numbers stay, marked unverified (never accepted)
            continue
        except child.AnswerTooLarge:
            raise
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - data the rebuild could not take: the learner's, said as such
            built.append(str(NotRebuildable.of(exc)))
            continue
        trace["jaxpr"] = view
        trace["output_names"] = names
        for key in TRUSTED_FACTS + ("kernels",):  # the child's own words: set again below from a case this
            trace.pop(key, None)  # process holds
        built.append([closed, tree, None])
    for case in result.get("cases", []):  # each program's compile starts now, all of them side by side
        k, source = case.get("trace"), cases_in.get(case.get("name"))
        if (case.get("status") == "ok" and isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(built)
                and not isinstance(built[k], str) and built[k][2] is None and source is not None):
            args = child.build_args(t, source["args"], specs)
            if json.dumps(child.arg_summary(args, specs), sort_keys=True) == traces[k].get("key"):
                dynamic = t["tree_leaves"]([a for i, a in enumerate(args) if i not in static])
                built[k][2] = _compilers.submit(compile_program, built[k][0], dynamic)
    for case in result.get("cases", []):
        case.pop("unverified", None)
        if case.get("status") != "ok":
            continue
        k = case.get("trace")
        source = cases_in.get(case.get("name"))
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(built) or source is None:
            _error(case, "the grader could not match this case to a traced program")
            continue
        if isinstance(built[k], str):
            if "output" in case:
                case["unverified"] = built[k][:300]
            elif source.get("hidden"):  # not run anywhere: shown as not run, and never accepted
                case["unverified"] = built[k][:300]
                case["not_run"] = HIDDEN_UNRUNNABLE % built[k][:300]
            else:
                _error(case, built[k][:300])
            continue
        closed, tree, compiled = built[k]
        args = child.build_args(t, source["args"], specs)
        if json.dumps(child.arg_summary(args, specs), sort_keys=True) != traces[k].get("key"):
            _error(case, "the grader could not match this case to a traced program")
            continue
        dynamic = t["tree_leaves"]([a for i, a in enumerate(args) if i not in static])
        if len(dynamic) != len(closed.jaxpr.invars):
            _error(case, "the traced program takes %d inputs, but this case's arguments flatten to %d: the program "
                         "was not traced from this function's arguments" % (len(closed.jaxpr.invars), len(dynamic)))
            continue
        try:
            if isinstance(compiled, Future):
                compiled = built[k][2] = compiled.result()
            if compiled is None:
                compiled = built[k][2] = compile_program(closed, dynamic)
            _check_planned(compiled, memory_bytes)
            outs = run_program(closed, dynamic, compiled)
        except NotRebuildable as exc:
            _error(case, str(exc)[:300])
            continue
        except PlannedTooLarge:
            raise
        except Exception as exc:  # noqa: BLE001 - the program failed when run (e.g. a checkify error)
            _error(case, kernel_fault(exc, closed) or child.describe(exc))
            continue
        case["output"] = child.encode(t, _fill(tree, outs), budget)  # replaces whatever the child sent
        trace = traces[k]
        if "args" not in trace:  # the facts the checks read, from the first case this process ran on it
            trace["args"] = child.arg_summary(args, specs)
            if any(e.primitive.name == "pallas_call" for e in all_eqns(closed)):
                trace["kernels"] = kernel_signature(closed)  # what the TPU compile must be (``tpu_compile.attach``)
            trace["input_names"] = child.input_names(args, specs, t)
            trace["case"] = case["name"]
            # how XLA partitioned it over the devices (collectives, each device's share, the shardings)
            try:
                trace["partitioned"] = partition_record(compiled, dynamic, outs)
            except Exception:  # noqa: BLE001 - no record: the rows that read it fail closed
                trace["partitioned"] = None
        sent = sum(int(getattr(o, "size", 1)) for o in outs) <= budget.elements
        if "probes" not in trace and case["name"] in probe_cases and sent:
            trace["probes"], trace["step_reads"] = _measured(t, closed, job, source["args"], args, specs, dynamic,
                                                             outs)
        if "experiments" not in trace and case["name"] in probe_cases and sent:
            # the problem's own experiments on this program (``experiments.py``): what it computes, measured
            program = Program(t, closed, args, specs, dynamic, trace["output_names"])
            trace["experiments"] = run_experiments(t, job.get("problem"), program)
    _keep_trusted(result, built, child)
    return result


_planned: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()


def _planned_once(compiled: Any) -> int:
    """``planned_bytes`` of a compiled program, read once per program (every case of a shape runs the same
    compiled program, and reading XLA's memory analysis costs a few milliseconds each time)."""
    try:
        return _planned[compiled]
    except (KeyError, TypeError):
        pass
    planned = planned_bytes(compiled)
    try:
        _planned[compiled] = planned
    except TypeError:  # not weakly referable: read it each time
        pass
    return planned


PROBES_KEPT = 64
"""Probe results a verifier keeps (least recently used dropped first), by program and case: the probes are a
function of the rebuilt program and the case's inputs alone, and a class's Runs are mostly the same few
programs on the same visible examples. Measuring them again took about half a verified Run's time."""
_probes: OrderedDict[str, str] = OrderedDict()
_probes_lock = threading.Lock()


def _probe_key(closed: Any, job: dict, case_args: Any, specs: list) -> str | None:
    """What decides a program's probes on one case, all of it this process's own: the digest of the data the
    program was rebuilt from (``rebuild.program_digest``), the case's inputs as the grader sent them, the
    arguments' specs and the problem's probe settings. None for a program not rebuilt from data here."""
    digest = program_digest(closed)
    if digest is None:
        return None
    facts = [digest, case_args, specs, job.get("probe_primitives"), job.get("step_influence")]
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=repr).encode()).hexdigest()


def _measured(t: dict, closed: Any, job: dict, case_args: Any, args: list, specs: list, dynamic: list,
              outs: list) -> tuple[dict, dict]:
    """``child.measure``'s ``(probes, step_reads)``, kept by ``_probe_key`` for the next Run of the same program on
    the same case (a result that says an error is measured again next time: it may have been a passing want
    of memory)."""
    key = _probe_key(closed, job, case_args, specs)
    with _probes_lock:
        kept = _probes.get(key) if key is not None else None
        if kept is not None:
            _probes.move_to_end(key)
    if kept is not None:
        probes, reads = json.loads(kept)
        return probes, reads
    probes, reads = t["child"].measure(t, closed, job, args, specs, dynamic, outs)
    if key is not None and "error" not in probes and "error" not in reads:
        try:
            text = json.dumps([probes, reads])
        except (TypeError, ValueError):
            return probes, reads
        with _probes_lock:
            _probes[key] = text
            while len(_probes) > PROBES_KEPT:
                _probes.popitem(last=False)
    return probes, reads


def _keep_trusted(result: dict, built: list, child: Any) -> None:
    """Keep the traced programs the checks may read: each rebuilt one that a case ran on here (its facts are
    this process's), and each that could not be rebuilt (shown with its cases unverified or failed, so never
    accepted); a rebuilt program no case ran on is the child's word only, and is left out."""
    traces = result.get("traces", [])
    keep = [k for k, t in enumerate(traces) if k < len(built) and (isinstance(built[k], str) or "args" in t)]
    index = {k: i for i, k in enumerate(keep)}
    result["traces"] = [traces[k] for k in keep]
    for i, k in enumerate(keep):
        if not isinstance(built[k], str):
            # JAX's printed program, and each equation's line in it, for the first program only: the page
            # shows that one (printing every program cost about a tenth of a Submit's verification)
            kept = result["traces"][i]
            kept["text"] = ""
            if i == 0:
                kept["text"] = str(built[k][0])
                child.attach_lines(kept["jaxpr"], kept["text"])
    for case in result.get("cases", []):
        k = case.get("trace")
        if isinstance(k, int) and not isinstance(k, bool) and k in index:
            case["trace"] = index[k]
        else:
            case.pop("trace", None)


def _error(case: dict, message: str) -> None:
    case.pop("output", None)
    case["status"], case["message"], case["traceback"] = "error", message, ""
