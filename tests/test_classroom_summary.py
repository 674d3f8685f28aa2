"""From a grader report to the class's row, and from rows to the board's figures and the CSV."""
from __future__ import annotations

import csv
import datetime as dt
import io

import pytest

from classroom import Attempt, Learner, outcome
from classroom.export import COLUMNS, csv_text
from classroom.summary import duration, learner_rows, problem_board, problems_seen
from grader.records import CaseResult, LeafResult, Report, RequirementResult, Verdict, learner

T0 = dt.datetime(2026, 3, 2, 9, 0, 0)


def _report(verdict: Verdict, message: str = "", cases=(), requirements=()) -> Report:
    return Report(file="<editor>", problem="p", verdict=verdict, message=message, cases=list(cases),
                  requirements=list(requirements), elapsed_s=1.5)


REQS = [RequirementResult("one-scan", "Use one `lax.scan`.", False, "no scan at line 12"),
        RequirementResult("grad-inside-scan", "Call grad inside the scan.", True, "ok")]


def test_a_report_becomes_its_verdict_word_requirements_and_a_countable_failure():
    row = outcome("p", "submit", "code", _report(Verdict.REQUIREMENTS_NOT_MET, "1 requirement", requirements=REQS))
    assert (row.kind, row.verdict, row.passed, row.failed) == ("submit", "requirements_not_met",
                                                              ("grad-inside-scan",), ("one-scan",))
    assert row.failure == "one-scan not met: Use one lax.scan.", "plain text: no Markdown to cut"
    assert row.elapsed_s == 1.5 and row.code == "code"

    def wrong(got: str) -> str:
        leaf = LeafResult("loss", False, f"loss: got {got}, expected 1.060169 (abs err 1.1e-02 > tol 1.2e-04)")
        case = CaseResult("Hidden 3", True, False, "loss differs", leaves=[leaf])
        return outcome("p", "run", "", _report(Verdict.WRONG_ANSWER, "", cases=[case])).failure
    assert wrong("1.0712") == wrong("-3e5") == "Wrong Answer: loss: got …, expected … (abs err … > tol …)"

    raised = outcome("p", "run", "", _report(Verdict.RUNTIME_ERROR, f"Your code raised {learner('ValueError: <b>x</b>')}"))
    assert raised.failure.startswith("Runtime Error: Your code raised") and "<b>x</b>" in raised.failure
    assert outcome("p", "submit", "", _report(Verdict.ACCEPTED, "ok", requirements=REQS[1:])).failure == ""
    assert len(outcome("p", "run", "", _report(Verdict.SYNTAX_ERROR, "x" * 5000)).failure) <= 240
    assert len(outcome("p", "run", "y" * 500_000, _report(Verdict.SYNTAX_ERROR)).code) == 100_000
    with pytest.raises(ValueError):
        outcome("p", "custom", "", _report(Verdict.ACCEPTED))


def _attempt(i: int, who: int, kind: str, verdict: str, passed=(), failed=(), failure="", minutes=0.0, problem="p"):
    return Attempt(i, who, problem, kind, verdict, tuple(passed), tuple(failed), failure, 0.5,
                   T0 + dt.timedelta(minutes=minutes))


LEARNERS = [Learner(1, "ana", T0), Learner(2, "bo", T0), Learner(3, "cy", T0), Learner(4, "=HYPERLINK(x)", T0)]
ATTEMPTS = [
    _attempt(1, 1, "run", "requirements_not_met", ["b"], ["a"], "`a` not met: A", minutes=1),
    _attempt(2, 2, "run", "requirements_not_met", ["b"], ["a"], "`a` not met: A", minutes=2),
    _attempt(3, 1, "submit", "accepted", ["a", "b"], [], minutes=5),
    _attempt(4, 3, "run", "wrong_answer", [], ["a", "b"], "Wrong Answer: x", minutes=6),
    _attempt(5, 2, "run", "requirements_not_met", ["b"], ["a"], "`a` not met: A", minutes=7),
    _attempt(6, 1, "run", "wrong_answer", [], ["a", "b"], "Wrong Answer: y", minutes=8),  # after solving
    _attempt(7, 3, "run", "accepted", ["a", "b"], [], minutes=9, problem="q"),
    _attempt(8, 2, "submit", "accepted", ["a", "b"], [], minutes=12),
]


def test_the_board_counts_learners_requirements_failures_and_time_to_accept():
    board = problem_board("p", LEARNERS, ATTEMPTS, [("a", "A"), ("b", "B"), ("c", "C")])
    assert (board.joined, board.ran, board.accepted) == (4, 3, 2)
    # latest per learner on p: ana #6 (fails a, b), bo #8 (passes both), cy #4 (fails both)
    assert [(r.id, r.passing, r.failing) for r in board.requirements] == [("a", 1, 2), ("b", 1, 2), ("c", 0, 0)]
    # only cy is not through; a Run accepted is not a solve
    assert (board.common_failure, board.common_failure_count) == ("Wrong Answer: x", 1)
    assert board.median_to_accept_s == pytest.approx(((5 - 1) + (12 - 2)) * 60 / 2)
    assert board.fastest == ("ana", 240.0)
    assert problems_seen(ATTEMPTS) == ["p", "q"]
    q = problem_board("q", LEARNERS, ATTEMPTS)
    assert (q.ran, q.accepted, [r.id for r in q.requirements]) == (1, 0, ["a", "b"])


def test_learner_rows_count_solved_problems_attempts_and_the_last_one():
    rows = {r.nickname: r for r in learner_rows(LEARNERS, ATTEMPTS)}
    assert [(r.solved, r.attempts, r.last.id if r.last else None) for r in rows.values()] == [
        (1, 3, 6), (1, 3, 8), (0, 2, 7), (0, 0, None)]


def test_the_csv_has_one_row_per_attempt_with_the_contract_columns_and_inert_cells():
    text = csv_text(LEARNERS, ATTEMPTS + [_attempt(9, 4, "run", "runtime_error", failure="=cmd|' /C calc'!A0")])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == COLUMNS and COLUMNS[:4] == ("nickname", "problem", "kind", "verdict")
    assert len(rows) == len(ATTEMPTS) + 1
    first = rows[0]
    assert (first["nickname"], first["problem"], first["kind"], first["verdict"], first["requirements_passed"],
            first["requirements_failed"]) == ("ana", "p", "run", "requirements_not_met", "b", "a")
    assert dt.datetime.fromisoformat(first["at"]) == (T0 + dt.timedelta(minutes=1)).replace(tzinfo=dt.timezone.utc)
    assert rows[2]["requirements_passed"] == "a b"
    assert rows[-1]["nickname"] == "'=HYPERLINK(x)" and rows[-1]["failure"].startswith("'=")


def test_durations_read_as_words():
    assert [duration(s) for s in (None, 42, 185, 3720)] == ["–", "42 s", "3 min 05 s", "1 h 02 min"]


def test_the_board_names_who_fails_each_requirement_and_who_could_not_run():
    attempts = ATTEMPTS + [_attempt(9, 4, "run", "syntax_error", failure="Syntax Error: line …", minutes=13)]
    board = problem_board("p", LEARNERS, attempts, [("a", "A"), ("b", "B")])
    assert [(r.id, r.failing_names) for r in board.requirements] == [("a", ("ana", "cy")), ("b", ("ana", "cy"))]
    assert board.could_not_run == ("=HYPERLINK(x)",), "a syntax error fails no requirement: it did not run"
    assert board.ran == 4 and sum(r.passing + r.failing for r in board.requirements[:1]) == 3
    assert board.common_failure_names == ("cy",)
    old_row = _attempt(10, 4, "run", "runtime_error", [], ["a", "b"], "Runtime Error: x", minutes=14)
    assert problem_board("p", LEARNERS, attempts + [old_row]).requirements[0].failing_names == ("ana", "cy"), \
        "an old row that listed every requirement as failed for a runtime error counts as could not run"


def test_the_fastest_solve_says_how_it_began():
    from classroom.summary import fastest_words
    first_submit = [_attempt(1, 1, "submit", "accepted", ["a"], [], minutes=3)]
    assert fastest_words(problem_board("p", LEARNERS, first_submit)) == \
        "accepted on their very first attempt (a Submit)"
    after_run = [_attempt(1, 2, "run", "wrong_answer", minutes=1), _attempt(2, 2, "submit", "accepted", minutes=4)]
    assert fastest_words(problem_board("p", LEARNERS, after_run)) == "3 min 00 s after their first Run"
    after_submit = [_attempt(1, 2, "submit", "wrong_answer", minutes=1), _attempt(2, 2, "submit", "accepted", minutes=2)]
    assert fastest_words(problem_board("p", LEARNERS, after_submit)) == "1 min 00 s after their first Submit"


def test_a_could_not_run_attempt_leaves_requirements_out_of_the_row_and_the_csv():
    row = outcome("p", "run", "x = (", _report(Verdict.SYNTAX_ERROR, "invalid syntax", requirements=REQS))
    assert (row.verdict, row.passed, row.failed) == ("syntax_error", (), ())
    text = csv_text(LEARNERS[:1], [_attempt(1, 1, "run", row.verdict, row.passed, row.failed, row.failure)])
    [line] = list(csv.DictReader(io.StringIO(text)))
    assert (line["verdict"], line["requirements_passed"], line["requirements_failed"]) == ("syntax_error", "", "")
    wrong = outcome("p", "run", "", _report(Verdict.WRONG_ANSWER, requirements=REQS))
    assert wrong.failed == ("one-scan",), "code that ran keeps its requirement results"


@pytest.mark.parametrize("text", ["\u200d=cmd|' /C calc'!A0", "\u200b+1", "\ufeff-1", "\u2060@SUM(1)", "\t=1",
                                  "\uff1d1+1", " \u200d=1"])
def test_the_csv_guard_looks_past_every_leading_invisible_character(text):
    from classroom.export import cell
    assert cell(text).startswith("'")


# Issue 42: the most common failure counts every learner failing each requirement; plain text, never cut Markdown


def test_the_most_common_failure_counts_every_learner_failing_each_requirement():
    """cara fails a and b (her verdict's line names a), ivo fails b only: grouped by the first failing line
    the board said "1 learner: cara"; b is failed by both."""
    people = [Learner(1, "cara", T0), Learner(2, "ivo", T0), Learner(3, "zed", T0)]
    attempts = [_attempt(1, 1, "run", "requirements_not_met", [], ["a", "b"], "`a` not met: A", minutes=1),
                _attempt(2, 2, "run", "requirements_not_met", ["a"], ["b"], "`b` not met: B `x`", minutes=2),
                _attempt(3, 3, "run", "runtime_error", [], [], "Runtime Error: boom", minutes=3)]
    board = problem_board("p", people, attempts, [("a", "Use `lax.scan`."), ("b", "Put `grad` inside.")])
    assert (board.common_failure_count, board.common_failure_names) == (2, ("cara", "ivo"))
    assert board.common_failure == "b not met: Put grad inside." and board.common_failure_requirement == "b"
    assert "`" not in board.common_failure


def test_a_failure_line_is_plain_text_cut_at_a_word_and_a_requirement_line_is_never_cut():
    long_sentence = "Checkpoint the block " + "with the dots_saveable policy " * 20
    reqs = [RequirementResult("checkpoint-dots-saveable", long_sentence, False, "no")]
    row = outcome("p", "run", "", _report(Verdict.REQUIREMENTS_NOT_MET, "x", requirements=reqs))
    assert row.failure.startswith("checkpoint-dots-saveable not met: Checkpoint the block")
    assert row.failure.endswith("policy") and "…" not in row.failure, "a requirement's sentence in full"
    error = outcome("p", "run", "", _report(Verdict.RUNTIME_ERROR, "Your code raised `" + "word " * 100 + "`")).failure
    assert len(error) <= 240 and error.endswith("word…") and "`" not in error, "cut at a word, no code span"


def test_old_rows_with_markdown_and_a_cut_code_span_read_as_plain_text_on_the_board_and_in_the_csv():
    old = [_attempt(1, 1, "run", "requirements_not_met", [], ["checkpoint-dots-saveable"],
                    "`checkpoint-dots-saveable` not met: Use `jax.checkpoint` with `dots_sav…", minutes=1),
           _attempt(2, 2, "run", "runtime_error", [], [], "Runtime Error: `checkpoint-d", minutes=2)]
    rows = list(csv.DictReader(io.StringIO(csv_text(LEARNERS, old))))
    assert [r["failure"] for r in rows] == ["checkpoint-dots-saveable not met: Use jax.checkpoint with dots_sav…",
                                           "Runtime Error: checkpoint-d"]
    board = problem_board("p", LEARNERS, old)
    assert "`" not in board.common_failure


def test_a_record_written_late_takes_its_place_by_when_it_was_graded():
    """The outbox may write a refused record after later ones of the same learner: by id it would look like
    their latest attempt."""
    late = [_attempt(2, 1, "run", "accepted", ["a"], [], minutes=5),
            _attempt(3, 1, "run", "wrong_answer", [], ["a"], "Wrong Answer: x", minutes=1)]  # graded first, written last
    assert learner_rows(LEARNERS[:1], late)[0].last.verdict == "accepted"
    assert problem_board("p", LEARNERS[:1], late).requirements[0].failing == 0
