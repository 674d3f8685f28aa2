"""What the board shows, computed from a class's learners and recorded attempts (plain data in, plain data out).

Per problem: learners joined, how many ran it, how many had a Submit accepted (solved), per requirement who
passes and who fails it on their latest attempt (by name: the teacher sees who needs help), who could not
run at all (syntax, runtime, time or memory errors: such an attempt passes and fails no requirement), the
most common failure among learners not yet through and who shares it (every learner failing a requirement
counts for that requirement, not only for the first one their verdict names), and the time from a learner's
first attempt to their first accepted Submit. Per learner: problems solved, last verdict, the requirements
their latest attempt fails, attempts, and which attempt holds their last code.

"Latest" is by when an attempt was graded (``at``, then the row's id): a record the database took late (the
outbox tried it again) takes its place in time, not at the end.
"""
from __future__ import annotations

import datetime as dt
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from classroom.results import could_not_run, plain_failure
from classroom.store import Attempt, Learner


def when(a: Attempt) -> tuple[dt.datetime, int]:
    """The order of a learner's attempts: when each was graded, then the row's id."""
    return (a.at, a.id)


@dataclass(frozen=True)
class RequirementTally:
    id: str
    text: str
    passing: int
    """Learners whose latest attempt on the problem passes this requirement."""
    failing: int
    """Learners whose latest attempt ran and fails it."""
    failing_names: tuple[str, ...] = ()
    """Who they are, in the order they joined."""


@dataclass(frozen=True)
class ProblemBoard:
    problem: str
    joined: int
    ran: int
    """Learners with at least one Run or Submit of this problem."""
    accepted: int
    """Learners with an accepted Submit of it (solved)."""
    requirements: list[RequirementTally]
    common_failure: str
    """The failure most learners not yet through share on their latest attempt, as plain text ('' when nobody
    is failing): a requirement (``id not met: sentence``), counted for every learner failing it, or a failure
    line (a wrong answer, an error) that no requirement explains."""
    common_failure_count: int
    median_to_accept_s: float | None
    """Median, over learners who solved it after at least one earlier attempt, of the time from their first
    attempt to their first accepted Submit (a solve on the very first attempt has no such time: it is
    counted in ``first_try`` rather than as 0 s)."""
    fastest: tuple[str, float] | None
    """(nickname, seconds) of the quickest such learner."""
    common_failure_names: tuple[str, ...] = ()
    """Who shares the most common failure."""
    could_not_run: tuple[str, ...] = ()
    """Learners whose latest attempt could not run (syntax, runtime, time, memory or output errors)."""
    first_try: int = 0
    """Learners whose very first attempt was their accepted Submit."""
    fastest_first: str = ""
    """How the fastest learner began: ``run``, ``submit``, or ``solved-first`` when their first attempt was the
    accepted Submit itself (so their time is no time at all, and the board says so)."""
    common_failure_requirement: str = ""
    """The requirement's id when the most common failure is a requirement ('' otherwise)."""


@dataclass(frozen=True)
class LearnerRow:
    learner_id: int
    nickname: str
    solved: int
    attempts: int
    last: Attempt | None
    """Their latest Run or Submit, of any problem."""


def problems_seen(attempts: Iterable[Attempt]) -> list[str]:
    """The problems the class has attempted, in the order of their first attempt."""
    return list(dict.fromkeys(a.problem for a in attempts))


def problem_board(problem: str, learners: Sequence[Learner], attempts: Sequence[Attempt],
                  requirements: Sequence[tuple[str, str]] = ()) -> ProblemBoard:
    """The board's figures for one problem; ``requirements`` gives ids and sentences in the problem's order
    (ids seen in attempts but not there come after, with no sentence)."""
    names = {learner.id: learner.nickname for learner in learners}
    mine = [a for a in attempts if a.problem == problem and a.learner_id in names]
    latest: dict[int, Attempt] = {}
    first: dict[int, dt.datetime] = {}
    solved_at: dict[int, dt.datetime] = {}
    for a in sorted(mine, key=when):
        latest[a.learner_id] = a
        first.setdefault(a.learner_id, a.at)
        if a.kind == "submit" and a.verdict == "accepted":
            solved_at.setdefault(a.learner_id, a.at)

    order = list(requirements)
    known = {rid for rid, _ in order}
    for a in latest.values():
        for rid in a.passed + a.failed:
            if rid not in known:
                known.add(rid)
                order.append((rid, ""))
    ran_ok = {lid: a for lid, a in latest.items() if not could_not_run(a.verdict)}  # (old rows listed them all)
    order_ids = [learner.id for learner in learners]
    tallies = [RequirementTally(rid, text, sum(rid in a.passed for a in ran_ok.values()),
                                sum(rid in a.failed for a in ran_ok.values()),
                                tuple(names[lid] for lid in order_ids if lid in ran_ok and rid in ran_ok[lid].failed))
               for rid, text in order]

    common, count, sharing, common_req = _common_failure(
        {lid: a for lid, a in latest.items() if lid not in solved_at}, order, order_ids, names)
    to_accept = {lid: (at - first[lid]).total_seconds() for lid, at in solved_at.items()}
    straight = {lid for lid in solved_at if sorted((a for a in mine if a.learner_id == lid), key=when)[0]
                .kind == "submit" and solved_at[lid] == first[lid]}
    timed = {lid: s for lid, s in to_accept.items() if lid not in straight}
    quickest = min(to_accept, key=lambda lid: (to_accept[lid], lid)) if to_accept else None
    how = ""
    if quickest is not None:
        theirs = sorted((a for a in mine if a.learner_id == quickest), key=when)
        how = "solved-first" if theirs[0].kind == "submit" and theirs[0].verdict == "accepted" else theirs[0].kind
    return ProblemBoard(
        problem=problem, joined=len(learners), ran=len(latest), accepted=len(solved_at), requirements=tallies,
        common_failure=common, common_failure_count=count,
        median_to_accept_s=statistics.median(timed.values()) if timed else None,
        fastest=(names[quickest], to_accept[quickest]) if quickest is not None else None,
        common_failure_names=sharing,
        could_not_run=tuple(names[lid] for lid in order_ids if lid in latest and could_not_run(latest[lid].verdict)),
        first_try=len(straight), fastest_first=how, common_failure_requirement=common_req)


def _common_failure(failing: dict[int, Attempt], requirements: Sequence[tuple[str, str]], order_ids: list[int],
                    names: dict[int, str]) -> tuple[str, int, tuple[str, ...], str]:
    """(text, learners, their names, requirement id or '') of the failure most learners not yet through share.
    Each learner counts once for every requirement their latest attempt fails and once for its failure line
    when no requirement explains it (a wrong answer, an error). Ties go to the failure line (the verdict a
    learner reads first), then to the one whose first learner joined first."""
    sentences = dict(requirements)
    who: dict[tuple[str, str], list[int]] = {}
    for lid in order_ids:
        a = failing.get(lid)
        if a is None:
            continue
        if a.failure and a.verdict != "requirements_not_met":
            who.setdefault(("line", plain_failure(a.failure)), []).append(lid)
        if not could_not_run(a.verdict):
            for rid in a.failed:
                who.setdefault(("requirement", rid), []).append(lid)
            if not a.failed and a.failure and a.verdict == "requirements_not_met":
                who.setdefault(("line", plain_failure(a.failure)), []).append(lid)
    if not who:
        return "", 0, (), ""
    position = {lid: i for i, lid in enumerate(order_ids)}
    (kind, key), lids = min(who.items(), key=lambda item: (-len(item[1]), item[0][0] != "line",
                                                           position[item[1][0]]))
    if kind == "line":
        return key, len(lids), tuple(names[lid] for lid in lids), ""
    sentence = " ".join(plain_failure(sentences.get(key, "")).split())
    return (f"{key} not met: {sentence}" if sentence else f"{key} not met"), len(lids), \
        tuple(names[lid] for lid in lids), key


def learner_rows(learners: Sequence[Learner], attempts: Sequence[Attempt]) -> list[LearnerRow]:
    """One row per learner, in the order they joined."""
    by_learner: dict[int, list[Attempt]] = {learner.id: [] for learner in learners}
    for a in attempts:
        if a.learner_id in by_learner:
            by_learner[a.learner_id].append(a)
    rows = []
    for learner in learners:
        mine = sorted(by_learner[learner.id], key=when)
        solved = {a.problem for a in mine if a.kind == "submit" and a.verdict == "accepted"}
        rows.append(LearnerRow(learner.id, learner.nickname, len(solved), len(mine), mine[-1] if mine else None))
    return rows


def fastest_words(board: ProblemBoard) -> str:
    """The fastest solve in words that are true of how it began (Markdown-free; the name is the caller's)."""
    if board.fastest is None:
        return ""
    _, seconds = board.fastest
    if board.fastest_first == "solved-first":
        return "accepted on their very first attempt (a Submit)"
    return f"{duration(seconds)} after their first {'Run' if board.fastest_first == 'run' else 'Submit'}"


def duration(seconds: float | None) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``; an en dash for none."""
    if seconds is None:
        return "–"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"
