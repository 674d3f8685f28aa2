"""The annotated template is a working problem: copied and built, it grades like any other."""
import json
import shutil

import problems
from grader.cli import build_hidden_expected
from grader.grade import grade
from grader.records import Verdict


def test_template_copied_to_a_folder_is_a_complete_problem(tmp_path):
    folder = tmp_path / "row-sums"
    shutil.copytree(problems.ROOT / "_template", folder)
    problem = problems.load_problem(folder)
    (folder / "hidden_expected.json").write_text(json.dumps(build_hidden_expected(problem)))
    assert len(problem.hidden) >= 12

    assert grade(problem, problem.reference).verdict is Verdict.ACCEPTED
    assert grade(problem, problem.starter, examples_only=True).verdict is Verdict.RUNTIME_ERROR
    wrong = (folder / "submissions/wrong_answer/column_sums.py").read_text()
    assert grade(problem, wrong).verdict is Verdict.WRONG_ANSWER
    loop = grade(problem, (folder / "submissions/fails/uses-reduce/python_loop.py").read_text())
    assert loop.verdict is Verdict.REQUIREMENTS_NOT_MET
    assert [r.id for r in loop.requirements if not r.passed] == ["uses-reduce"]


def test_registry_skips_the_template():
    assert "row-sums" not in problems.registry()
    assert all(not slug.startswith("_") for slug in problems.registry())
