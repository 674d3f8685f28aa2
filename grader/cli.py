"""``python -m grader``: grade files from the command line (on a local pool, or on a queue's workers with
``--queue``), serve a queue as a grading worker (``worker``, in ``grader/queue/``), list problems, rebuild hidden
outputs, check the sandbox (``doctor``), measure what a file's structure costs (``cost``, in ``cost/cli.py``)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import problems
from grader.cost import cli as cost_cli
from grader.grading.compare import to_expected
from grader.grading.grade import grade, job_for
from grader.records import Report, unmarked
from grader.sandbox import Limits
from grader.grading.workers import PROBE_JOB, run_job, warm_helpers, worker_pool


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description="Grade JAX playground submissions.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="grade one or more files against a problem")
    check.add_argument("problem", help="the problem's slug (see `python -m grader list`)")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.add_argument("--examples-only", action="store_true", help="grade the visible examples only (Run)")
    check.add_argument("--json", action="store_true", help="print one JSON array, one object per file")
    check.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files graded at once")
    check.add_argument("--time-limit", type=float, default=Limits.wall_s, metavar="SECONDS",
                       help="wall-clock seconds per file, JAX start-up included (default %(default)g)")
    check.add_argument("--queue", metavar="URL", help="grade on the workers of this queue "
                       "(redis://[:password@]host:port/db) instead of a local pool")
    worker = sub.add_parser("worker", help="take gradings from a queue and grade them on a local warm pool")
    worker.add_argument("--queue", metavar="URL", required=True, help="redis://[:password@]host:port/db")
    worker.add_argument("--pool-size", type=int, metavar="N", help="gradings at once (default: the CPU count)")
    doctor = sub.add_parser("doctor", help="say which isolation layers work here (runs one test child)")
    doctor.add_argument("--json", action="store_true", help="print the probe as JSON")
    sub.add_parser("list", help="list the problems")
    build = sub.add_parser("build-cases", help="recompute the hidden cases' expected outputs from the reference")
    build.add_argument("problem", nargs="*", help="slugs (default: every problem)")
    gallery = sub.add_parser("gallery", help="grade a problem's submissions/ gallery against the verdicts its "
                                             "files state (for problem authors)")
    gallery.add_argument("problem", help="the problem's slug")
    gallery.add_argument("-k", dest="only", default="", help="only files whose path contains this text")
    mutants = sub.add_parser("mutants", help="grade the catalogue's mutants of a problem's reference on its hidden "
                                            "cases and report each that survives (for problem authors)")
    mutants.add_argument("problem", nargs="*", help="slugs (default: every problem)")
    mutants.add_argument("--json", action="store_true", help="print one JSON array, one object per mutant")
    mutants.add_argument("--all", action="store_true", help="list killed mutants too, not only the ones to act on")
    mutants.add_argument("--source", metavar="FILE", help="mutate this right answer (a gallery file, say) "
                         "instead of the reference (one problem only)")
    mutants.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants graded at once")
    cost_cli.add_parser(sub)
    args = parser.parse_args(argv)

    if args.command == "list":
        for p in problems.registry().values():
            print(f"{p.slug:45s} {p.difficulty:7s} {p.title}")
        return 0
    if args.command == "build-cases":
        return _build_cases(args.problem or list(problems.registry()))
    if args.command == "doctor":
        return _doctor(args.json)
    if args.command == "gallery":
        return _gallery(args.problem, args.only)
    if args.command == "mutants":
        return _mutants(parser, args)
    if args.command == "cost":
        return cost_cli.run(parser, args)
    if args.command == "worker":
        from grader.queue.worker import serve
        return serve(args.queue, args.pool_size)
    return _check(parser, args)


def _gallery(slug: str, only: str) -> int:
    """Grade every gallery file and print, per file, the verdict and failing requirements it got against
    what it states; exit 1 on any difference."""
    problem = problems.get(slug)
    gallery = [s for s in problem.gallery() if only in str(s.path)]
    size = max(1, min(len(gallery), os.cpu_count() or 1))
    with worker_pool(size=size, warm=size, max_spawns=len(gallery), warm_up=False) as workers:
        with ThreadPoolExecutor(max_workers=size) as threads:
            reports = list(threads.map(lambda s: grade(problem, s.path.read_text(), file=str(s.path),
                                                       run=workers.run), gallery))
    wrong = 0
    for sub_, report in zip(gallery, reports):
        failed = sorted(r.id for r in report.requirements if not r.passed and not r.advice)  # advice decides nothing
        ok = report.verdict.value == sub_.expect and failed == sorted(sub_.fails)
        wrong += not ok
        name = sub_.path.relative_to(problem.folder / "submissions")
        print(f"{'ok ' if ok else 'BAD'} {name}: {report.verdict.value} fails={','.join(failed) or 'none'}"
              + ("" if ok else f"  (expected {sub_.expect} fails={','.join(sub_.fails) or 'none'})"))
        if not ok:
            print(f"      {report.message}")
            for r in report.requirements:
                print(f"      {r.mark} {r.id}: {r.message}")
    print(f"{len(gallery) - wrong} of {len(gallery)} as stated")
    return 1 if wrong else 0


def _mutants(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Grade every mutant on the warm pool; print survivors, equivalents and stale entries (every mutant
    with ``--all``); exit 1 when a non-equivalent mutant survives or an equivalence entry is stale."""
    from grader.mutation.mutants import EQUIVALENT, failing, run_mutants
    registry = problems.registry()
    unknown = [s for s in args.problem if s not in registry]
    if unknown:
        parser.exit(2, f"python -m grader: unknown problem {unknown[0]!r}\n")
    slugs = args.problem or list(registry)
    if args.source and len(slugs) != 1:
        parser.exit(2, "python -m grader: --source mutates one problem's file; name that problem\n")
    source = Path(args.source).read_text() if args.source else None
    for slug in slugs:
        problems.get(slug).hidden  # the stored expected outputs, before the workers start
    jobs = max(1, args.jobs)
    with worker_pool(jobs, warm=jobs, warm_up=False) as workers:
        results = run_mutants([registry[s] for s in slugs], workers.run, threads=jobs, source=source)
    bad = failing(results)
    shown = results if args.all else [r for r in results if r in bad or r.verdict == EQUIVALENT]
    if args.json:
        print(json.dumps([r.to_json() for r in shown], indent=2))
    else:
        for r in shown:
            print(f"{r.verdict:10s} {r.problem} {r.id} line {r.line} [{r.key}] {r.description}"
                  + (f"\n           {r.detail}" if r.detail else ""))
        print(f"{len(results)} mutants of {len(slugs)} problem(s): "
              + ", ".join(f"{sum(r.verdict == v for r in results)} {v}"
                          for v in ("killed", "survived", "equivalent", "stale", "error")))
    return 1 if bad else 0


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    registry = problems.registry()
    if args.problem not in registry:
        parser.exit(2, f"python -m grader: unknown problem {args.problem!r}. Known problems:\n"
                       + "".join(f"  {slug}\n" for slug in registry))
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        parser.exit(2, "python -m grader: no such file: " + ", ".join(missing) + "\n")
    problem = registry[args.problem]
    if args.queue:
        return _report(args, _check_on_queue(problem, args))
    jobs = max(1, min(args.jobs, len(args.files)))
    # One checker and one verifier start while the first file runs. A second starts (in the background) only
    # when an answer finds the first busy on other programs: a verifier that has compiled a file's programs
    # answers the same programs again in a tenth of the time, so six copies need one, and a JAX import
    # (two seconds of CPU) on the batch's clock for a helper nobody needs was most of each extra file's cost.
    warm_helpers(1)
    problem.checks  # load the checks and the hidden cases once, before the workers start
    if not args.examples_only:
        problem.hidden

    # The app's warm pool, sized for this batch: workers start while earlier files are graded, no spare is
    # started once every file has one, and none does a warm-up job (CPU a batch needs for the next file).
    with worker_pool(jobs, warm=jobs, max_spawns=len(args.files), warm_up=False) as workers:
        def one(path: str) -> Report:
            code = Path(path).read_text(encoding="utf-8", errors="replace")
            return grade(problem, code, examples_only=args.examples_only, file=path,
                         limits=Limits(wall_s=args.time_limit), run=workers.run)

        with ThreadPoolExecutor(max_workers=jobs) as threads:
            reports = list(threads.map(one, args.files))
    return _report(args, reports)


def _check_on_queue(problem: problems.Problem, args: argparse.Namespace) -> list[Report]:
    """Every file as a job on the queue at once; the workers decide how many run at a time."""
    from grader.queue.client import QueueRunner
    runner = QueueRunner(args.queue)

    def one(path: str) -> Report:
        code = Path(path).read_text(encoding="utf-8", errors="replace")
        return runner.grade(problem, code, examples_only=args.examples_only, file=path,
                            limits=Limits(wall_s=args.time_limit))

    with ThreadPoolExecutor(max_workers=max(1, min(len(args.files), 64))) as threads:
        return list(threads.map(one, args.files))


def _report(args: argparse.Namespace, reports: list[Report]) -> int:
    if args.json:
        print(json.dumps([r.to_json() for r in reports], indent=2))
    else:
        for r in reports:
            print(render_text(r))
    return 0 if all(r.accepted for r in reports) else 1


def render_text(report: Report) -> str:
    """A readable summary: verdict, failing cases, each requirement with its message."""
    lines = [f"{report.file}: {report.verdict.label} ({report.elapsed_s:.1f} s)", f"  {report.message}"]
    passed = sum(c.passed for c in report.cases)
    lines.append(f"  cases: {passed}/{len(report.cases)} passed")
    for c in report.cases:
        if not c.passed and c.message != "not run":
            lines.append(f"    ✗ {c.name}: {c.message}")
    lines.append("  requirements:")
    for r in report.requirements:
        lines.append(f"    {r.mark} {r.id}: {r.message}")
    if report.traceback:
        lines.append("  traceback:")
        lines.extend("    " + line for line in report.traceback.rstrip().splitlines())
    return unmarked("\n".join(lines))


def _doctor(as_json: bool) -> int:
    """Print which isolation layers work; exit 1 when a required layer is missing."""
    from grader.sandbox import doctor
    from grader.grading.workers import CHILD
    info = doctor.probe(deep=True, payload=CHILD, job=PROBE_JOB)
    info["tpu"] = _tpu_status()
    if as_json:
        print(json.dumps(info, indent=2))
    else:
        for name, layer in info["layers"].items():
            print(f"{'ok ' if layer['ok'] else 'OFF'} {name:13s} {layer['detail']}")
        workers = info.get("workers")
        if workers:
            print(f"{'ok ' if workers['forked'] else '-- '} {'workers':13s} {workers['detail']}")
        tpu = info["tpu"]
        print(f"{'ok ' if tpu['ok'] else '-- '} {'tpu targets':13s} {tpu['detail']}")
        print(f"JAXPLAY_REQUIRE_SANDBOX={info['required'] or '(unset)'}")
        print(info["note"])
    return 0 if info["ready"] else 1


TPU_PROBE_CODE = "import jax.numpy as jnp\n\ndef f(x):\n    return jnp.tanh(x @ x.T).sum()\n"


def _tpu_status() -> dict:
    """Whether the Cost tab's TPU targets work here: libtpu installed, and a small program compiled for a TPU
    v5e inside the sandbox, as a measurement does (optional: the CPU target needs none of it)."""
    from grader.cost.measure import TPU_COST_LIMITS
    from grader.cost.targets import TARGETS, tpu_extra
    from grader.grading.workers import run_job
    installed, why = tpu_extra()
    names = [t.name for t in TARGETS.values() if t.platform == "tpu"]
    if not installed:
        return {"ok": False, "targets": [], "detail": f"not available (optional): {why}"}
    job = {"kind": "cost", "entry": "f", "args": [{"name": "x", "kind": "float32", "dtype": "float32"}],
           "codes": {"probe.py": TPU_PROBE_CODE}, "target": TARGETS["tpu-v5e"].job(),
           "programs": [{"label": "probe", "program": "probe", "file": "probe.py", "shapes": {"x": [256, 128]}}]}
    outcome = run_job(job, TPU_COST_LIMITS)
    got = ((outcome.result or {}).get("programs") or [{}])[0]
    if got.get("status") != "ok":
        why_not = (outcome.result or {}).get("message") or got.get("message") or outcome.result_error or \
            f"exit status {outcome.exit_code}: {outcome.stderr.strip().splitlines()[-1:] or ''}"
        return {"ok": False, "targets": [], "detail": f"{why}, but a TPU compile in the sandbox failed: {why_not}"}
    return {"ok": True, "targets": names, "detail": f"{', '.join(names)} ({why}; a TPU v5e compile in the sandbox "
            f"took {outcome.elapsed_s:.1f} s, peak {got.get('peak_bytes')} bytes planned)"}


def _build_cases(slugs: list[str]) -> int:
    for slug in slugs:
        problem = problems.get(slug)
        try:
            stored = build_hidden_expected(problem)
        except RuntimeError as exc:
            print(f"{slug}: {exc}", file=sys.stderr)
            return 1
        (problem.folder / "hidden_expected.json").write_text(json.dumps(stored, indent=1) + "\n")
        print(f"{slug}: wrote {len(stored['cases'])} hidden cases")
    return 0


def build_hidden_expected(problem: problems.Problem) -> dict:
    """Run the reference on the generated hidden inputs (in a child, like any code) and return what
    ``hidden_expected.json`` stores: the seed, and each case's inputs digest and expected output."""
    inputs = problem.generate_hidden_inputs()
    job = job_for(problem, problem.reference, [(f"Hidden {i}", inp) for i, inp in enumerate(inputs, 1)])
    outcome = run_job(job, Limits(wall_s=300))
    result = outcome.result or {}
    if result.get("status") != "ok" or any(c["status"] != "ok" for c in result["cases"]):
        raise RuntimeError(f"the reference failed: {result or outcome}")
    return {"seed": problem.hidden_seed,
            "cases": [{"digest": problems.inputs_digest(inp), "expected": to_expected(c["output"])}
                      for inp, c in zip(inputs, result["cases"])]}
