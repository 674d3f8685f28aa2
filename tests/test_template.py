"""The annotated template is a working problem: copied and built, it grades like any other."""
import json
import shutil

import pytest

import problems
from grader.cli import build_hidden_expected
from grader.grading.grade import grade
from grader.records import Verdict


@pytest.mark.slow
def test_template_copied_to_a_folder_is_a_complete_problem(tmp_path):
    folder = tmp_path / "row-sums"
    shutil.copytree(problems.ROOT / "_template", folder)
    problem = problems.load_problem(folder)
    (folder / "hidden_expected.json").write_text(json.dumps(build_hidden_expected(problem)))
    assert len(problem.hidden) >= 12

    assert grade(problem, problem.reference).verdict is Verdict.ACCEPTED
    assert grade(problem, problem.starter, examples_only=True).verdict is Verdict.RUNTIME_ERROR
    gallery = problem.gallery()
    assert {s.path.parent.name for s in gallery} >= {"accepted", "cheats", "wrong_answer", "uses-reduce"}
    for submission in gallery:  # each file gets exactly the verdict and failing requirements it states
        report = grade(problem, submission.path.read_text())
        assert report.verdict.value == submission.expect, (submission.path, report.message)
        assert [r.id for r in report.requirements if not r.passed] == list(submission.fails), submission.path
    # its hidden cases kill every mutant of its reference but the one it lists as equivalent
    from grader.mutation.mutants import EQUIVALENT, KILLED, run_mutants
    from grader.grading.workers import run_job
    verdicts = {r.description: r.verdict for r in run_mutants([problem], run_job, threads=1)}
    assert verdicts == {"axis=1 -> axis=-1": EQUIVALENT, "axis=1 -> axis=0": KILLED, "1 -> 2": KILLED}, verdicts


def test_registry_skips_the_template():
    assert "row-sums" not in problems.registry()
    assert all(not slug.startswith("_") for slug in problems.registry())


def test_every_starter_fits_the_editor():
    """Issue 21: starters' lines fit a 72-character editor (their TODO comments ended mid-sentence at its edge)."""
    import problems
    long = [(slug, i, len(line)) for slug, p in problems.registry().items()
            for i, line in enumerate(p.starter.splitlines(), 1) if len(line) > 72]
    assert not long, long
