"""Class board under load: 60 joined learners, 30 Runs at once, every result recorded, the board current.

The Runs go the app's way: each on a thread of its own, graded by the app's runner (``pages.services.runs.get_runner``:
the shared warm pool, or the queue with ``JAXPLAY_QUEUE``), then recorded by the app's hook
(``pages.services.class_store.record``) for a learner who joined through the store, as a page's grading thread does.
Meanwhile a board polls every ``--refresh`` seconds as ``/board`` does (learners, attempts, the summary).

    python benchmarks/class_board.py [--learners 60] [--runs 30] [--db URL] [--refresh 2] [--big 300]

Reports: rows recorded against Runs made (every one must be there), the board's lag (from a row's commit to
the first board refresh that showed it; the page adds its drawing), and the database's share of a Run's
time (the hook's time over grading plus hook), with the board's own query time. Then a class of ``--big``
learners with three attempts each: the board's queries and figures, and the whole ``/board`` script run
(drawn headless by Streamlit's AppTest, every learner's row included), each refresh timed.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REMAT = "rematerialized-mlp-block"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learners", type=int, default=60)
    ap.add_argument("--runs", type=int, default=30, help="Runs started at once")
    ap.add_argument("--db", default="", help="a SQLAlchemy URL (default: a fresh SQLite file, as the app's default)")
    ap.add_argument("--refresh", type=float, default=2.0, help="seconds between the board's refreshes")
    ap.add_argument("--big", type=int, default=300, help="learners of the large class whose board is timed")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="jaxplay-board-bench-")
    os.environ["JAXPLAY_DB"] = args.db or f"sqlite:///{tmp}/classroom.sqlite3"
    os.environ["JAXPLAY_DATA"] = f"{tmp}/data"  # the recording hook's outbox

    import problems
    from classroom import ClassStore, describe, summary
    from grader.sandbox.pool import shutdown_shared_pools
    from pages.services import class_store
    from pages.services.runs import get_runner

    store = ClassStore(os.environ["JAXPLAY_DB"]).ready()
    info, _ = store.start_class("load benchmark")
    members = [store.join(info.code, f"learner {i:02d}")[0] for i in range(args.learners)]
    problem = problems.get(REMAT)
    wrong = problem.reference.replace('return {"loss": loss', 'return {"loss": 2 * loss')
    print(f"database: {describe(store.url)}; class {info.code}; {len(members)} learners joined")

    print("warming the pool with one Run ...", flush=True)
    get_runner().grade(problem, problem.reference, examples_only=True)

    committed: dict[int, float] = {}  # row id -> when its hook returned
    seen: dict[int, float] = {}  # row id -> when a board refresh first showed it
    board_s: list[float] = []
    stop = threading.Event()

    def board() -> None:
        while not stop.is_set():
            began = time.monotonic()
            learners = store.learners(info.code)
            attempts = store.attempts(info.code)
            for slug in summary.problems_seen(attempts):
                summary.problem_board(slug, learners, attempts)
            summary.learner_rows(learners, attempts)
            done = time.monotonic()
            board_s.append(done - began)
            for a in attempts:
                seen.setdefault(a.id, done)
            stop.wait(args.refresh)

    timings: list[tuple[float, float, bool]] = []  # (grading s, hook s, recorded)
    lock = threading.Lock()
    barrier = threading.Barrier(args.runs)

    def one_run(i: int) -> None:
        who = members[i % len(members)]
        code = problem.reference if i % 3 else wrong
        barrier.wait()
        began = time.monotonic()
        report = get_runner().grade(problem, code, examples_only=True)
        graded = time.monotonic()
        note = class_store.record(who, problem.slug, "run", code, report)
        hooked = time.monotonic()
        with lock:
            timings.append((graded - began, hooked - graded, bool(note and note.recorded)))
            for a in store.attempts(info.code):
                committed.setdefault(a.id, hooked)

    watcher = threading.Thread(target=board, daemon=True)
    watcher.start()
    started = time.monotonic()
    threads = [threading.Thread(target=one_run, args=(i,)) for i in range(args.runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    last_verdict = time.monotonic() - started
    deadline = time.monotonic() + 30  # rows the hook left to the outbox ("recorded later") go in meanwhile
    while store.counts(info.code)[1] < args.runs and time.monotonic() < deadline:
        time.sleep(0.2)
    for a in store.attempts(info.code):
        committed.setdefault(a.id, time.monotonic())
    time.sleep(args.refresh + 1.0)  # one more refresh after the last row
    stop.set()
    watcher.join()
    shutdown_shared_pools()

    rows = store.counts(info.code)[1]
    recorded = sum(1 for *_, ok in timings if ok)
    lags = [seen[i] - committed[i] for i in committed if i in seen]
    hook = [h for _, h, _ in timings]
    share = [h / (g + h) for g, h, _ in timings]
    print(f"Runs: {args.runs} at once, last verdict after {last_verdict:.1f} s")
    print(f"rows recorded: {rows} of {args.runs} Runs ({recorded} in the hook's own wait, the rest through the "
          f"outbox just after: 'recorded later'){'' if rows == args.runs else '  <-- ROWS MISSING'}")
    print(f"board lag (row committed -> a refresh showed it, refresh every {args.refresh:g} s): "
          f"median {statistics.median(lags):.2f} s, max {max(lags):.2f} s"
          f"{'' if max(lags) <= 5.0 else '  <-- OVER 5 s'}")
    print(f"board refresh query + summary: median {1000 * statistics.median(board_s):.1f} ms, "
          f"max {1000 * max(board_s):.1f} ms over {len(board_s)} refreshes")
    print(f"recording hook per Run: median {1000 * statistics.median(hook):.1f} ms, max {1000 * max(hook):.1f} ms")
    print(f"database's share of a Run's time (hook / (grading + hook)): median {100 * statistics.median(share):.2f} %, "
          f"max {100 * max(share):.2f} %")
    ok = rows == args.runs and lags and max(lags) <= 5.0
    if args.big:
        ok = big_board(store, problem, args.big) and ok
    return 0 if ok else 1


def _board_script(code: str, key: str) -> None:
    import streamlit as st
    from pages import board_page
    st.session_state.setdefault("jaxplay_progress", {"loaded": True, "merged": True, "code": {}, "solved": set(),
                                                     "pending": {}, "waited": 0, "items": {}})
    st.query_params.update({"class": code, "key": key})
    board_page.render()


def big_board(store, problem, n: int) -> bool:
    """A class of ``n`` learners, three attempts each: the board's refresh, queries and drawing."""
    from streamlit.testing.v1 import AppTest

    from classroom import Outcome, summary
    info, key = store.start_class(f"{n} learners", max_learners=n)
    reqs = [r.id for r in problem.requirements]
    for i in range(n):
        who, _ = store.join(info.code, f"learner {i:03d}")
        for j, verdict in enumerate(("syntax_error", "requirements_not_met", "accepted" if i % 3 else "wrong_answer")):
            failed = () if verdict in ("syntax_error", "accepted") else tuple(reqs[:1 + i % len(reqs)])
            passed = () if verdict == "syntax_error" else tuple(r for r in reqs if r not in failed)
            store.record(who, Outcome(problem.slug, "submit" if j == 2 else "run", verdict, passed, failed,
                                      "" if verdict == "accepted" else f"{verdict}: x", problem.reference, 1.0))
    queries = []
    for _ in range(10):
        began = time.monotonic()
        learners, attempts = store.learners(info.code), store.attempts(info.code)
        summary.problem_board(problem.slug, learners, attempts)
        summary.learner_rows(learners, attempts)
        queries.append(time.monotonic() - began)
    at = AppTest.from_function(_board_script, args=(info.code, key), default_timeout=120)
    at.run()  # the first run imports the page's modules
    drawn = []
    for _ in range(5):
        began = time.monotonic()
        at.run()
        drawn.append(time.monotonic() - began)
    rows = sum(text.count('class="jaxplay-cell"') for text in (m.value for m in at.markdown)) or \
        len([b for b in at.button if b.key and b.key.startswith("board-code-")])
    print(f"board of {n} learners ({len(attempts)} attempts): queries + figures median "
          f"{1000 * statistics.median(queries):.1f} ms, max {1000 * max(queries):.1f} ms; the whole /board script run "
          f"(AppTest, {rows} learner rows drawn) median {statistics.median(drawn):.2f} s, max {max(drawn):.2f} s"
          f"{'' if statistics.median(drawn) <= 2.0 else '  <-- OVER THE 2 s REFRESH'}")
    return rows == n and not at.exception


if __name__ == "__main__":
    sys.exit(main())
