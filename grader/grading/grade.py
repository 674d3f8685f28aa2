"""Grade one submission: run it in a child, compare its outputs, check the requirements on its traces."""
from __future__ import annotations

import dataclasses
import os
import random
import signal
import time
from dataclasses import asdict
from typing import Any, Callable

import numpy as np

from grader.grading import checker, source_policy
from grader.toolkit import structure
from grader.verifier import service as verifier
from grader.verifier import tpu_compile
from grader.grading.bounds import answer_problem
from grader.grading.compare import compare
from grader.grading.hidden import abstract_inputs
from grader.records import (CaseResult, ErrorKind, Report, RequirementResult, Verdict, learner, pick_verdict)
from grader.sandbox import Limits, RunOutcome, refusal
from grader.sandbox.outcome import LOST_STATUS, WORKER_LOST
from grader.grading.workers import run_job
from problems import Problem

Runner = Callable[[dict[str, Any], Limits], RunOutcome]


def job_for(problem: Problem, code: str, cases: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """What the child gets: the code and named inputs, never the expected outputs or the checks (``problem``
    names the problem, for a runner that sends the job to another machine: ``grader/queue/``)."""
    return {
        "problem": problem.slug,
        "code": code,
        "entry": problem.entry,
        "args": [asdict(a) for a in problem.args],
        "cases": [{"name": name, "args": inputs} for name, inputs in cases],
        "probe_primitives": list(problem.probe_primitives),
        "step_influence": problem.step_influence,
    }


PROBED_HIDDEN_SHAPES = 6
"""How many hidden input shapes, drawn at random per Submit, also get the counterfactual probes (a few
milliseconds to a few tens each). Every visible example's shape is probed as well."""


def build_job(problem: Problem, code: str, examples_only: bool) -> dict[str, Any]:
    """The child's job for Run (visible examples) or Submit (examples and hidden cases): see ``build_jobs``."""
    return build_jobs(problem, code, examples_only)[0]


def build_jobs(problem: Problem, code: str, examples_only: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(child's job, verifier's job)``. The verifier's holds every case's inputs and which cases are probed;
    the child's holds the visible examples' inputs (public: the learner's prints show) and, for a hidden case,
    only what tracing needs (``hidden.abstract_inputs``), and names only visible cases among the probed."""
    cases = problem.cases(examples_only)
    trusted = job_for(problem, code, [(c.name, c.inputs) for c in cases])
    trusted["probe_cases"] = probe_cases(problem, cases)
    for entry, case in zip(trusted["cases"], cases):
        entry["hidden"] = case.hidden
    shown = {c.name for c in cases if not c.hidden}
    job = dict(trusted, probe_cases=[n for n in trusted["probe_cases"] if n in shown],
               cases=[{"name": c.name, "args": abstract_inputs(problem.args, c.inputs), "abstract": True} if c.hidden
                      else {"name": c.name, "args": c.inputs} for c in cases])
    if verifier.ENABLED:
        job["verify"] = trusted["verify"] = True
    for target in (job, trusted):
        if problem.tpu_compile and not examples_only:
            target["tpu_compile"] = problem.tpu_compile
        elif problem.tpu_compile:  # a Run stays interactive: the TPU compile is a Submit's, and the row says so
            target["tpu_compile_on_submit"] = True
    return job, trusted


def probe_cases(problem: Problem, cases: list) -> list[str]:
    """The cases on which the child measures whether the structure carries the answer: the first case of
    each visible example's shape, and of ``PROBED_HIDDEN_SHAPES`` hidden shapes chosen at random (so a
    submission cannot know which of its traced programs are probed)."""
    first: dict[str, Any] = {}
    for case in cases:
        first.setdefault(_shape_key(problem, case.inputs), case)
    shown = [c.name for c in first.values() if not c.hidden]
    hidden = [c.name for c in first.values() if c.hidden]
    return shown + random.SystemRandom().sample(hidden, min(PROBED_HIDDEN_SHAPES, len(hidden)))


def _shape_key(problem: Problem, inputs: dict[str, Any]) -> str:
    """What decides a traced program: each array's shape and each static argument's value."""
    parts = []
    for a in problem.args:
        value = inputs.get(a.name)
        if a.static or a.kind in ("int", "float", "key"):
            parts.append(f"{a.name}={value if a.static else a.kind}")
        else:
            parts.append(f"{a.name}={_structure(value)}")
    return ";".join(parts)


def _structure(value: Any) -> str:
    """A JSON input's nesting and shapes (what a traced program depends on)."""
    if isinstance(value, dict) and "v" in value and value.get("t") in ("list", "tuple", "array"):
        return f"{value['t']}:{_structure(value['v'])}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_structure(v)}" for k, v in sorted(value.items())) + "}"
    try:
        return str(np.shape(value))
    except ValueError:  # ragged
        return "[" + ",".join(_structure(v) for v in value) + "]"


MIN_VERIFIER_S = 0.5
"""The least the verifier is given, however long the child took within its limit (a child that finished in
time has its programs run; one that spins until the limit's last instant does not get a second limit)."""

RUN_BASE_S, SUBMIT_BASE_S, PER_CASE_S = 5.0, 10.0, 1.0
PALLAS_WALL_FACTOR = 3.0
"""A Pallas problem's wall-clock limit is this many times another's: the verifier runs its kernel in interpret
mode, which compiles a loop over the grid for each input shape (3-4 s a shape on two busy cores, and as much
again for the probes), where a plain program compiles in a fraction of a second."""
"""Time limits fit the work: a warm Run of three examples takes about 0.4 s of CPU, so an endless loop is
stopped after 8 s, not 30; a Submit (a dozen or more cases, more shapes to compile) gets more."""
MAX_BUSY_FACTOR = 4.0
"""On a machine busier than its cores, limits stretch by the load per core (up to this factor): a right
answer must not run out of time because a class, or other work, shares the CPUs."""


def limits_for(problem: Problem, examples_only: bool, load: float | None = None) -> Limits:
    """The limits of a Run (visible examples) or a Submit on a warm worker (whose clock starts when the job
    is delivered): a base plus a second per case, times how busy the machine is (``load``: the 1-minute load
    average, read here by default). The app passes these; ``grade``'s default stays the generous
    ``Limits()``, which also covers a cold process's JAX start-up."""
    base = RUN_BASE_S if examples_only else SUBMIT_BASE_S
    if load is None:
        load = os.getloadavg()[0]
    busy = min(MAX_BUSY_FACTOR, max(1.0, load / (os.cpu_count() or 1)))
    return Limits(wall_s=round((base + PER_CASE_S * len(problem.cases(examples_only))) * busy))


def grade(problem: Problem, code: str, *, examples_only: bool = False, file: str = "<editor>",
          limits: Limits = Limits(), run: Runner = run_job) -> Report:
    """Grade ``code`` on the problem's visible examples (Run) or on examples and hidden cases (Submit)."""
    started = time.monotonic()
    cases = problem.cases(examples_only)
    outcome = RunOutcome(result=None)
    if problem.tpu_compile:  # a Pallas kernel: interpret mode compiles a loop over the grid, per shape
        limits = dataclasses.replace(limits, wall_s=limits.wall_s * PALLAS_WALL_FACTOR)
    try:
        refused = refusal()
        against = source_policy.unreadable(code) or (source_policy.check(code) if source_policy.ENABLED else None)
        if refused:
            outcome = RunOutcome(result={"status": "sandbox_unavailable", "message": refused})
        elif against is not None:  # read on this side, before anything runs (grader/grading/source_policy.py)
            report = _refuse_source(problem, cases, against, file)
            report.elapsed_s = round(time.monotonic() - started, 3)
            report.limits = {"wall_s": limits.wall_s}
            return report
        else:
            job, trusted = build_jobs(problem, code, examples_only)
            outcome = run(job, limits)
            if job.get("verify") and not (isinstance(outcome.result, dict)
                                          and answer_problem(outcome.result, len(cases))):
                # the numbers and probes from the rebuilt programs (grader/verifier/), on the inputs only this
                # process held; an answer past the grader's bounds is an Output Limit without being sent on.
                # One time limit for both: the verifier has what the child left of it.
                tpu_trace = outcome.result.pop("tpu_trace", None) if isinstance(outcome.result, dict) else None
                left = max(MIN_VERIFIER_S, limits.wall_s - outcome.elapsed_s)
                outcome = verifier.verified(trusted, outcome, left, limits.memory_bytes)
                # a Pallas problem's TPU compile row, inside the run's one time budget and memory limit
                tpu_compile.attach(trusted, outcome.result, tpu_trace,
                                   max(MIN_VERIFIER_S, limits.wall_s - (time.monotonic() - started)),
                                   limits.memory_bytes)
            else:
                tpu_compile.attach(trusted, outcome.result)
        report = _interpret(problem, cases, outcome, limits, file, code)
    except Exception as exc:  # noqa: BLE001 - one bad run (or a malformed answer) must not take the grader down
        report = Report(file=file, problem=problem.slug, verdict=Verdict.INTERNAL_ERROR, error_kind=ErrorKind.GRADER,
                        message=f"The grader failed on this run ({learner(f'{type(exc).__name__}: {str(exc)[:200]}')}); this is "
                                "not your fault, and the code was not accepted.",
                        stdout=outcome.stdout, stderr=outcome.stderr)
    report.elapsed_s = round(time.monotonic() - started, 3)
    report.limits = {"wall_s": limits.wall_s}
    return report


def _refuse_source(problem: Problem, cases: list, refusal: source_policy.Refusal, file: str) -> Report:
    """The report for code the source policy refuses: a Runtime Error (the learner's), nothing run."""
    return Report(file=file, problem=problem.slug, verdict=Verdict.RUNTIME_ERROR, error_kind=ErrorKind.SUBMISSION,
                  message=refusal.message(),
                  cases=[CaseResult(name=c.name, hidden=c.hidden, passed=False, message="not run",
                                    inputs=None if c.hidden else c.inputs) for c in cases],
                  requirements=[RequirementResult(r.id, r.text, False, "Not checked: the code was refused before "
                                                  "it ran.", advice=r.advice) for r in problem.requirements])


def _interpret(problem: Problem, cases: list, outcome: RunOutcome, limits: Limits, file: str,
               code: str = "") -> Report:
    report = Report(file=file, problem=problem.slug, verdict=Verdict.INTERNAL_ERROR, message="",
                    stdout=outcome.stdout, stderr=outcome.stderr, output_truncated=outcome.output_truncated)
    not_run = [CaseResult(name=c.name, hidden=c.hidden, passed=False, message="not run",
                          inputs=None if c.hidden else c.inputs) for c in cases]

    def stop(verdict: Verdict, kind: ErrorKind, message: str, reason: str, traceback: str = "") -> Report:
        report.verdict, report.error_kind, report.message, report.traceback = verdict, kind, message, traceback
        report.cases = not_run
        report.requirements = [RequirementResult(r.id, r.text, False, f"Not checked: {reason}.", advice=r.advice)
                               for r in problem.requirements]
        return report

    where = getattr(outcome, "progress", "")  # the last "Hidden 4 (case 7 of 17)" the child announced
    at = f" while it was on {learner(where)}" if where else ""
    the_limit = f"{limits.wall_s:g} s (the limit for {len(cases)} case{'s' if len(cases) != 1 else ''})"
    if outcome.limit == "time":
        return stop(Verdict.TIME_LIMIT, ErrorKind.LEARNER,
                    f"Your code ran for more than {the_limit} and was stopped{at}. Look for a loop that never ends, "
                    "or work that grows with the data far more than it should.", "the run timed out")
    if outcome.limit == "memory":
        return stop(Verdict.MEMORY_LIMIT, ErrorKind.LEARNER,
                    f"Your code used more than {limits.memory_bytes / 2**30:g} GiB of memory and was stopped.",
                    "the run ran out of memory")
    if outcome.limit == "output":
        return stop(Verdict.OUTPUT_LIMIT, ErrorKind.LEARNER,
                    f"Your code printed more than {limits.output_bytes // 1024} KiB and was stopped. Print less, "
                    "or only inside small debugging runs.", "the run printed too much")
    if outcome.limit == "disk":
        return stop(Verdict.OUTPUT_LIMIT, ErrorKind.LEARNER,
                    f"Your code wrote more than {limits.scratch_bytes >> 20} MiB or {limits.scratch_files} files "
                    "to disk and was stopped. The grader needs no files: return your result instead.",
                    "the run wrote too much")
    if outcome.limit == "progress":
        return stop(Verdict.OUTPUT_LIMIT, ErrorKind.LEARNER,
                    f"Your code wrote more than {limits.progress_bytes >> 10} KiB on the grader's progress channel "
                    "and was stopped. Do not write to file descriptors you did not open.", "the run wrote too much")
    if outcome.limit == "answer":
        return stop(Verdict.OUTPUT_LIMIT, ErrorKind.LEARNER,
                    f"Your function's results were larger than the grader reads ({outcome.result_error}). Return "
                    "only what the problem asks for.", "the results were too large")
    result = outcome.result
    if result is None:
        code = outcome.exit_code
        if code is not None and code < 0:
            name = _signal_name(-code)
            if -code == signal.SIGXCPU or (-code == signal.SIGKILL and outcome.cpu_s >= limits.wall_s):
                return stop(Verdict.TIME_LIMIT, ErrorKind.LEARNER,
                            # A run dropped in priority waits longer in wall-clock time; its CPU time ends it.
                            f"Your code used more than {the_limit} of processor time and was stopped{at}. Look "
                            "for a loop that never ends, or work that grows with the data far more than it should.",
                            "the run timed out")
            if -code == signal.SIGKILL and outcome.peak_rss_bytes > 0.7 * limits.memory_bytes:
                return stop(Verdict.MEMORY_LIMIT, ErrorKind.LEARNER,
                            "Your program was killed by the system before grading finished, most likely because "
                            "it used too much memory.", "the program was killed")
            return stop(Verdict.RUNTIME_ERROR, ErrorKind.LEARNER,
                        f"The program crashed ({_crash_words(-code, name)}) before grading finished. This happens "
                        "with native code, ctypes or deep recursion, not with ordinary JAX.", "the program crashed")
        if outcome.result_error:
            return stop(Verdict.RUNTIME_ERROR, ErrorKind.LEARNER,
                        f"The grader could not read your program's results: {learner(outcome.result_error)}. Do not "
                        "write to file descriptors you did not open.", "no results came back")
        return stop(Verdict.RUNTIME_ERROR, ErrorKind.LEARNER,
                    f"Your program stopped (exit status {code}) before grading finished. Do not call `sys.exit` or "
                    "`os._exit`, or close or write to file descriptors you did not open; return the result from "
                    "your function.", "the program exited early")

    too_large = answer_problem(result, len(cases))
    if too_large:
        return stop(Verdict.OUTPUT_LIMIT, ErrorKind.LEARNER,
                    f"Your function's results were larger than the grader reads ({too_large}). Return only what the "
                    "problem asks for.", "the results were too large")
    status = result.get("status")
    if status == LOST_STATUS:  # put there by the pool, never the learner's own words
        return stop(Verdict.INTERNAL_ERROR, ErrorKind.GRADER, WORKER_LOST, "the grading worker was lost")
    if status == "output_limit":
        return stop(Verdict.OUTPUT_LIMIT, ErrorKind.LEARNER, str(result.get("message", "")),
                    "the results were too large")
    if status == "syntax_error":
        line = f" on line {result['line']}" if result.get("line") else ""
        return stop(Verdict.SYNTAX_ERROR, ErrorKind.SUBMISSION, f"{learner(result['message'])}{line}.",
                    "the code does not parse", result.get("traceback", ""))
    if status == "load_error" and _refused_shared_memory(result.get("message"), result.get("traceback")):
        return stop(Verdict.MEMORY_LIMIT, ErrorKind.LEARNER,
                    f"{SHARED_MEMORY_REFUSED} ({learner(result['message'])})", "the run asked for shared memory",
                    result.get("traceback", ""))
    if status == "load_error":
        return stop(Verdict.RUNTIME_ERROR, ErrorKind.LEARNER,
                    f"Your code raised while it was being loaded: {learner(result['message'])}", "the code raised on load",
                    result.get("traceback", ""))
    if status == "missing_entry":
        return stop(Verdict.RUNTIME_ERROR, ErrorKind.SUBMISSION,
                    result["message"] + f" Its signature is `{problem.signature}`.", "the entry function is missing")
    if status == "memory_error":
        said = str(result.get("message") or "")
        return stop(Verdict.MEMORY_LIMIT, ErrorKind.LEARNER,
                    "Your code tried to allocate more memory than allowed"
                    + (f": {learner(said)}." if said and said != "MemoryError" else "."), "the run ran out of memory",
                    result.get("traceback", ""))
    if status == "tampered":
        return stop(Verdict.RUNTIME_ERROR, ErrorKind.LEARNER, learner(result.get("message", "")),
                    "the code changed the grader's tools")
    if status == "sandbox_unavailable":
        return stop(Verdict.INTERNAL_ERROR, ErrorKind.GRADER,
                    "This server runs code only inside its sandbox, and the sandbox is not working, so your code "
                    f"was not run. This is not your fault; please tell the course staff. ({learner(result.get('message'))})",
                    "the sandbox is not available")
    if status != "ok":
        return stop(Verdict.INTERNAL_ERROR, ErrorKind.GRADER,
                    "The grader itself failed on this submission; this is not your fault. "
                    f"({learner(result.get('message', status))})", "the grader failed", result.get("traceback", ""))
    report.tpu = _compile_record(result)
    return _grade_cases(problem, cases, result, report, code)


def _compile_record(result: dict[str, Any]) -> dict[str, Any] | None:
    """The TPU compile record the trusted side put on the traced programs (``tpu_compile.attach``; the same
    on each), for the Cost tab; None where there is none."""
    for t in result.get("traces") or []:
        if isinstance(t, dict) and isinstance(t.get("tpu"), dict):
            return dict(t["tpu"])
    return None


def _grade_cases(problem: Problem, cases: list, result: dict[str, Any], report: Report, code: str = "") -> Report:
    by_name = {c["name"]: c for c in result.get("cases", [])}
    error_verdict, first_error = None, None
    not_run: set[str] = set()
    for case in cases:
        got = by_name.get(case.name)
        inputs = None if case.hidden else case.inputs
        if got is None:
            report.cases.append(CaseResult(case.name, case.hidden, False, "not run", inputs))
        elif got["status"] != "ok":
            raw = str(got.get("message", "error"))
            shared = _refused_shared_memory(raw, got.get("traceback"))
            hint = SHARED_MEMORY_REFUSED if shared else explain_jax_error(raw)
            message = learner(raw) + (f" {hint}" if hint else "")
            got = dict(got, message=message)
            report.cases.append(CaseResult(case.name, case.hidden, False, message, inputs))
            if first_error is None:
                first_error = got
                error_verdict = Verdict.MEMORY_LIMIT if shared or _looks_like_oom(raw) else Verdict.RUNTIME_ERROR
        elif "output" not in got:  # a hidden case the child only traced, and no verifier to run it (or a
            # program only the child could run: never accepted, see ``unverified`` below)
            message = f"not run: {learner(got['not_run'])}" if got.get("not_run") else HIDDEN_NOT_RUN
            report.cases.append(CaseResult(case.name, case.hidden, False, message, inputs))
            not_run.add(case.name)
        else:
            passed, message, leaves = compare(case.expected, got["output"], **problem.tolerance)
            if not passed and case.edge:  # a case built to reach an edge the statement names says which
                message = f"{message}. This case is an edge the statement names: {case.edge}"
            report.cases.append(CaseResult(case.name, case.hidden, passed, message, inputs, leaves))

    texts = [t.get("text", "") for t in result.get("traces", [])]
    report.jaxpr_text = texts[0] if texts else ""
    first_jaxpr = (result.get("traces") or [{}])[0].get("jaxpr")
    report.structure = structure.build(first_jaxpr) if first_jaxpr else None
    try:  # in a helper process, under a time budget (``checker.py``)
        report.requirements, grader_broke = checker.run_checks(problem, result.get("traces", []), first_error,
                                                                   source=code)
    except checker.ChecksTooSlow as exc:
        return _checks_too_slow(problem, report, exc.budget_s)

    if first_error is not None:
        report.traceback = first_error.get("traceback", "")
        report.error_kind = ErrorKind.LEARNER
    if grader_broke:
        error_verdict = error_verdict or Verdict.INTERNAL_ERROR
        report.error_kind = report.error_kind or ErrorKind.GRADER
    report.verdict = pick_verdict(error=error_verdict, cases=[c for c in report.cases if c.name not in not_run],
                                  requirements=report.requirements)
    report.message = _summary(report, first_error)
    if any(c.message == HIDDEN_NOT_RUN for c in report.cases) and report.verdict in (
            Verdict.ACCEPTED, Verdict.WRONG_ANSWER, Verdict.REQUIREMENTS_NOT_MET):
        report.verdict, report.error_kind = Verdict.INTERNAL_ERROR, ErrorKind.GRADER
        report.message = ("This server runs hidden cases only in its verifier, which is turned off here "
                          "(JAXPLAY_VERIFIER=0), so your code was not accepted. This is not your fault; please tell "
                          "the course staff. The visible examples were run as usual.")
        return report
    unverified = next((c["unverified"] for c in result.get("cases", []) if c.get("unverified")), None)
    if unverified and report.verdict is Verdict.ACCEPTED:  # numbers only the learner's process computed
        report.verdict = Verdict.REQUIREMENTS_NOT_MET
        report.message = (f"The grader could not run your traced program itself ({learner(unverified)}), so it "
                          "cannot accept it.")
    return report


HIDDEN_NOT_RUN = ("not run: hidden inputs never enter your code's process, and this server's verifier, which runs "
                  "hidden cases, is turned off")


def _checks_too_slow(problem: Problem, report: Report, budget_s: float) -> Report:
    """The report when the requirement checks overran their budget: Time Limit Exceeded, saying it was the
    checking that took too long; the outputs were compared as usual."""
    report.requirements = [RequirementResult(r.id, r.text, False, "Not checked: the grader ran out of time "
                                             "reading your program's structure.", advice=r.advice) for r in problem.requirements]
    report.verdict, report.error_kind = Verdict.TIME_LIMIT, ErrorKind.LEARNER
    report.message = (f"The grader could not finish checking this program's structure within {budget_s:g} s. "
                      "Programs this deeply nested (a scan inside a scan inside a scan...) or this large take the "
                      "checks too long; write the computation with fewer nested loops.")
    return report


JAX_ERROR_HINTS = {
    "TracerBoolConversionError": "Your function branches with a Python `if`/`while` on a traced value; under "
                                 "tracing values have no concrete truth value. Use `jnp.where` or `lax.cond`.",
    "ConcretizationTypeError": "Your function needs a concrete value where it only has a traced one (a shape, "
                               "a Python `int()`/`float()`, a loop bound). Keep such values static, or use "
                               "`lax` control flow.",
    "TracerIntegerConversionError": "A traced value was used as a Python int (an index or a `range` bound). Use "
                                    "`lax.dynamic_slice`/`lax.fori_loop`, or a static argument.",
    "TracerArrayConversionError": "A traced value was turned into a NumPy array (`np.asarray`, `.tolist()`...). "
                                  "Use `jax.numpy` inside the function.",
    "UnexpectedTracerError": "A traced value escaped its transformation, e.g. stored in a global or a list "
                             "outside the function. Return values instead of storing them.",
}


def explain_jax_error(message: str) -> str:
    """A sentence that teaches, for the JAX errors learners meet most when their code is traced."""
    for name, hint in JAX_ERROR_HINTS.items():
        if message.startswith(name) or f".{name}" in message.split(":", 1)[0]:
            return hint
    return ""


SHARED_MEMORY_REFUSED = ("Shared memory is not available in the sandbox (memfd_create, /dev/shm, System V shared "
                         "memory): memory held there would be outside the run's memory limit, so it is refused. "
                         "Keep your data in arrays.")
SHARED_MEMORY_CALLS = ("memfd_create", "memfd_secret", "shm_open", "shared_memory", "SharedMemory", "/dev/shm",
                       "shmget", "shmat")


def _refused_shared_memory(message: Any, traceback: Any) -> bool:
    """Whether a learner's exception is the sandbox refusing shared memory: an OS error (``[Errno N]``) raised
    where the submission asked for it (learner text: it can only change the learner's own verdict)."""
    text = f"{message or ''}\n{traceback or ''}"
    return "[Errno " in str(message or "") and any(call in text for call in SHARED_MEMORY_CALLS)


def _looks_like_oom(message: str) -> bool:
    return any(s in message for s in ("RESOURCE_EXHAUSTED", "Out of memory", "MemoryError", "out of memory"))


def _crash_words(num: int, name: str) -> str:
    words = {signal.SIGSEGV: "segmentation fault", signal.SIGBUS: "bus error", signal.SIGABRT: "aborted",
             signal.SIGILL: "illegal instruction", signal.SIGFPE: "arithmetic fault", signal.SIGSYS: "forbidden system call"}
    return f"{words[num]}, {name}" if num in words else name


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _summary(report: Report, first_error: dict[str, Any] | None) -> str:
    v = report.verdict
    failed = [c for c in report.cases if not c.passed]
    unmet = [r for r in report.requirements if not r.passed and r.decides]
    unchecked = [r for r in report.requirements if not r.checked and not r.advice]
    if v is Verdict.ACCEPTED and unchecked:  # said in the verdict, never a silent pass
        deciding = [r for r in report.requirements if not r.advice]
        held = len(deciding) - len(unchecked)
        where = ("Accepted on the CPU: all" if report.tpu and report.tpu.get("server") else "All")
        return (f"{where} {len(report.cases)} cases passed and {held} of {len(deciding)} requirements hold; "
                f"not checked: {', '.join(r.id for r in unchecked)} ({unchecked[0].message})")
    if v is Verdict.ACCEPTED:
        deciding = [r for r in report.requirements if not r.advice]
        return (f"All {len(report.cases)} cases passed and all {len(deciding)} requirements hold.")
    if first_error is not None and v in (Verdict.RUNTIME_ERROR, Verdict.MEMORY_LIMIT):
        return f"{first_error['name']}: {first_error.get('message', 'error')}"
    if v is Verdict.WRONG_ANSWER:
        return (f"{len(failed)} of {len(report.cases)} case{'s' if len(report.cases) != 1 else ''} failed. "
                f"{failed[0].name}: {failed[0].message}")
    if v is Verdict.REQUIREMENTS_NOT_MET:
        ids = ", ".join(r.id for r in unmet)
        many = len(unmet) != 1
        return f"The numbers are right, but {len(unmet)} requirement{'s are' if many else ' is'} not met: {ids}."
    return "The grader itself failed on this submission; this is not your fault."
