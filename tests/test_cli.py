"""`python -m grader`: the command line is a contract (flags, JSON fields, exit codes)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GA = ROOT / "problems" / "gradient-accumulation-with-scan"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_list_prints_every_problem():
    res = cli("list")
    assert res.returncode == 0
    assert "gradient-accumulation-with-scan" in res.stdout and "rematerialized-mlp-block" in res.stdout


@pytest.mark.slow
def test_json_has_one_object_per_file_in_order_with_the_contract_fields(tmp_path):
    bad = tmp_path / "loop.py"
    bad.write_text((GA / "submissions/requirements_not_met/python_loop.py").read_text())
    res = cli("check", "gradient-accumulation-with-scan", str(GA / "reference.py"), str(bad), "--json")
    assert res.returncode == 1, res.stderr
    reports = json.loads(res.stdout)
    assert [r["file"] for r in reports] == [str(GA / "reference.py"), str(bad)]
    for r in reports:
        assert {"file", "problem", "verdict", "cases", "requirements", "stdout", "stderr", "elapsed_s"} <= set(r)
        assert all({"name", "hidden", "passed", "message"} <= set(c) for c in r["cases"])
        assert [q["id"] for q in r["requirements"]] == ["one-scan", "grad-inside-scan", "microbatch-rows-only"]
        assert all({"id", "passed", "message"} <= set(q) for q in r["requirements"])
    assert [r["verdict"] for r in reports] == ["accepted", "requirements_not_met"]
    assert sum(c["hidden"] for c in reports[0]["cases"]) >= 12


def test_hidden_cases_never_print_inputs_or_expected_values():
    res = cli("check", "gradient-accumulation-with-scan", str(GA / "reference.py"), "--json")
    report = json.loads(res.stdout)[0]
    for case in report["cases"]:
        if case["hidden"]:
            assert "inputs" not in case
            assert all("expected" not in leaf and "got" not in leaf for leaf in case["leaves"])
    hidden_values = json.loads((GA / "hidden_expected.json").read_text())["cases"][0]["expected"]["loss"]
    assert repr(hidden_values) not in res.stdout


def test_examples_only_grades_the_three_visible_examples():
    res = cli("check", "gradient-accumulation-with-scan", str(GA / "reference.py"), "--examples-only", "--json")
    assert res.returncode == 0
    cases = json.loads(res.stdout)[0]["cases"]
    assert [c["name"] for c in cases] == ["Example 1", "Example 2", "Example 3"]


def test_text_summary_shows_verdict_and_each_requirement():
    res = cli("check", "gradient-accumulation-with-scan", str(GA / "submissions/requirements_not_met/python_loop.py"),
              "--examples-only")
    assert res.returncode == 1
    assert "Requirements Not Met" in res.stdout
    assert "✗ one-scan:" in res.stdout and "✗ grad-inside-scan:" in res.stdout


def test_unknown_problem_lists_the_known_ones():
    res = cli("check", "no-such-problem", str(GA / "reference.py"))
    assert res.returncode == 2
    assert "rematerialized-mlp-block" in res.stderr


def test_missing_file_is_named(tmp_path):
    res = cli("check", "rematerialized-mlp-block", str(tmp_path / "nope.py"))
    assert res.returncode == 2
    assert "nope.py" in res.stderr
