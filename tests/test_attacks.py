"""The attack suite (``tests/attacks/``), run in a private PID namespace with a private /tmp, with and without
bubblewrap: every hostile submission is contained (see ``attack_suite.py`` for what is checked).

Also the layers themselves: ``doctor`` reports them, ``JAXPLAY_REQUIRE_SANDBOX`` refuses to run code when a
required layer is missing, and right answers that print, use ``jax.debug.print`` or NumPy are accepted.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import problems
from grader.grading.grade import grade
from grader.records import Verdict
from grader.sandbox import bwrap, doctor
from grader.sandbox.inside import landlock

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = sorted((ROOT / "tests" / "attacks").glob("*.py"))
MODES = {"bwrap": {}, "no-bwrap": {"JAXPLAY_BWRAP": "0"}}


def _namespace_prefix() -> list[str]:
    """A PID, mount and network namespace of the suite's own: the suite is PID 1 (so no process of a broken
    sandbox can outlive it unseen), its temporary folders are private, and its loopback listeners are its own
    (the two modes' suites run at once)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("util-linux `unshare` is missing")
    base = [unshare, "--pid", "--fork", "--mount-proc", "--mount", "--propagation", "private", "--net"]
    if os.geteuid() != 0:
        base.insert(1, "--map-root-user")
    return base


def test_there_are_enough_attacks_and_each_says_what_it_expects():
    assert len(ATTACKS) >= 40
    for path in ATTACKS:
        head = path.read_text().splitlines()[:3]
        assert head[0].startswith("# problem: ") and head[1].startswith("# expect: "), path.name
        assert "accepted" not in head[1].split(":", 1)[1].split(), path.name
        assert head[0].split(": ", 1)[1] in problems.registry(), path.name


def _start_suite(mode: str) -> subprocess.Popen | None:
    if mode == "bwrap" and not bwrap.use_bwrap():
        return None
    only = os.environ.get("JAXPLAY_ATTACKS", "").split()
    # Private temporary folders for the suite (the app's secrets file is planted in one: the two suites run
    # at once), so that what the suite's watch finds there is the attacks' own.
    private = ["/tmp", "/var/tmp", "/dev/shm"]
    # A repository inside one of them (CI may clone into /tmp) is held at /mnt while a private tmpfs covers
    # the folder, then put back at its own path: the other tests' files there (browser profiles, a database)
    # stay out of the suite's sight, and the suite still sees the repository where it is.
    holder = next((d for d in private if ROOT.resolve().is_relative_to(Path(d).resolve())), None)
    # The suite works on a private copy of the repository, mounted over it in its own mount namespace: what it
    # watches for writes (git status of the repository) is then the attacks' alone, while the other tests,
    # which may run meanwhile, write into the real one (screenshots, logs, a copied problem template).
    root = shlex.quote(str(ROOT))
    copy = (f"mkdir /dev/shm/jaxplay-repo && tar -C {root} --exclude=./artifacts --exclude=./.jaxplay -cf - . "
            f"| tar -C /dev/shm/jaxplay-repo -xf - && mount --bind /dev/shm/jaxplay-repo {root} || exit 1; "
            if "/dev/shm" in private else "")
    hold = (f"mount --bind {root} /mnt || exit 1; " if holder else "")
    back = (f"mkdir -p {root} && mount --bind /mnt {root} || exit 1; " if holder else "")
    script = (hold + f"for d in {' '.join(private)}; do mount -t tmpfs -o mode=1777 tmpfs $d || exit 1; done; " + back
              + copy +
              f"mkdir -p {ROOT / '.streamlit'} && mount -t tmpfs tmpfs {ROOT / '.streamlit'} || exit 1; "
              "exec \"$0\" tests/attack_suite.py \"$@\"")
    cmd = _namespace_prefix() + ["sh", "-c", script, sys.executable, *only]
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXPLAY_")} | MODES[mode]
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")  # read once it ends: no pipe fills up
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, text=True, env=env)
    proc.outputs = (out, err)
    return proc


def _outputs(proc: subprocess.Popen) -> tuple[str, str]:
    texts = []
    for f in proc.outputs:
        f.seek(0)
        texts.append(f.read())
        f.close()
    return texts[0], texts[1]


@pytest.fixture(scope="module")
def suites():
    """Both modes' suites, started together (each is one command line at a time, mostly waiting on a child's
    start-up or a time limit: side by side they take little longer than one)."""
    started = {mode: _start_suite(mode) for mode in MODES}
    yield started
    for proc in started.values():
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("mode", MODES)
def test_every_attack_is_contained(mode, suites):
    proc = suites[mode]
    if proc is None:
        pytest.skip(f"bubblewrap does not work here: {bwrap.bwrap_works()[1]}")
    try:
        proc.wait(timeout=3500)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    stdout, stderr = _outputs(proc)
    assert stdout.strip(), stderr[-3000:]
    summary = json.loads(stdout)
    assert summary["pid"] == 1  # the suite ran as PID 1 of its own namespace
    failed = [r for r in summary["results"] if not r["ok"]]
    assert not failed, "\n".join(f"{r['attack']}: {r['problems']}" for r in failed)
    only = os.environ.get("JAXPLAY_ATTACKS", "").split()
    assert len(summary["results"]) == (len(only) or len(ATTACKS))


@pytest.mark.parametrize("name", ["prints.py", "debug_print.py", "uses_numpy.py"])
def test_right_answers_that_print_or_use_numpy_are_accepted(name):
    path = ROOT / "tests" / "sandbox_ok" / name
    slug = path.read_text().splitlines()[0].split(": ", 1)[1]
    report = grade(problems.get(slug), path.read_text(), examples_only=True)
    assert report.verdict is Verdict.ACCEPTED, (report.message, report.stderr[-2000:])
    if name != "uses_numpy.py":
        assert "printed by the learner" in report.stdout


def test_doctor_reports_every_layer():
    done = subprocess.run([sys.executable, "-m", "grader", "doctor", "--json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    info = json.loads(done.stdout)
    assert {"bubblewrap", "landlock", "seccomp", "rlimits", "privileges"} <= set(info["layers"])
    assert done.returncode == 0
    if sys.platform == "linux" and landlock.abi() >= 1:
        assert info["layers"]["landlock"]["ok"] and info["layers"]["seccomp"]["ok"], info
        assert info["workers"]["forked"], info["workers"]  # a forked worker has all of the child's layers
        # checked from inside both: no call toward another process got through, /proc hides the host
        for layers in (info["layers"], info["workers"]["layers"]):
            assert layers["cross_process"]["ok"] and layers["proc"]["ok"], layers
            # memfd, /dev/shm and System V shared memory, tried from inside: each refused
            assert layers["shared_memory"]["ok"], layers["shared_memory"]
            assert layers["identity"]["ok"] == (os.geteuid() == 0), layers["identity"]
        # which mechanisms count a run's memory and make its priority drop count, said in words
        assert info["layers"]["memory"]["ok"] and "memfd" in info["layers"]["memory"]["detail"], info["layers"]
        assert "cgroup" in info["layers"]["memory"]["detail"]
        assert info["layers"]["priority"]["ok"], info["layers"]["priority"]


def test_a_required_but_missing_layer_refuses_to_run_code(monkeypatch, tmp_path):
    monkeypatch.setenv("JAXPLAY_REQUIRE_SANDBOX", "all")
    monkeypatch.setenv("JAXPLAY_BWRAP", "0")
    bwrap.bwrap_works.cache_clear()
    marker = tmp_path / "ran"
    try:
        problem = problems.get("rematerialized-mlp-block")
        code = f"open({str(marker)!r}, 'w').close()\n" + problem.reference
        report = grade(problem, code, examples_only=True)
        assert report.verdict is Verdict.INTERNAL_ERROR
        assert "sandbox" in report.message and "not your fault" in report.message
        assert not marker.exists()
        info = doctor.probe()
        assert not info["ready"] and info["missing"] == ["bubblewrap"]
    finally:
        bwrap.bwrap_works.cache_clear()


def test_without_the_requirement_a_missing_layer_is_only_a_note(monkeypatch):
    monkeypatch.delenv("JAXPLAY_REQUIRE_SANDBOX", raising=False)
    monkeypatch.setenv("JAXPLAY_BWRAP", "0")
    bwrap.bwrap_works.cache_clear()
    try:
        info = doctor.probe()
        assert info["ready"] and "bubblewrap" in info["note"]
        assert doctor.refusal() is None
    finally:
        bwrap.bwrap_works.cache_clear()


def test_a_batch_that_goes_wrong_as_a_whole_is_graded_again_attack_by_attack(monkeypatch):
    """What a batch cannot pin on one attack (a file written, a process left) is pinned by grading each of its
    attacks alone; when each passes alone, the batch's problem is still reported (one attack reached a later
    one). No process is started here: the command line is replaced."""
    sys.path.insert(0, str(ROOT / "tests"))
    import attack_suite

    a, b = ATTACKS[0], ATTACKS[1]
    calls = []

    def fake_batch(paths, tokens, listeners):
        calls.append([p.name for p in paths])
        results = [{"attack": p.name, "ok": True, "problems": [], "verdict": "runtime_error", "seconds": 1.0}
                   for p in paths]
        wrong = ["written outside scratch: git: ['pwned']"] if len(paths) > 1 or paths[0] == b else []
        return results, wrong

    monkeypatch.setattr(attack_suite, "run_batch", fake_batch)
    monkeypatch.setattr(attack_suite, "header", lambda p: {"problem": "p", "expect": "runtime_error"})
    results = attack_suite.run_attacks([a, b], [], None)
    assert calls == [[a.name, b.name], [a.name], [b.name]]
    assert results[0]["ok"] and not results[1]["ok"] and "pwned" in results[1]["problems"][0]

    calls.clear()
    def together_only(paths, tokens, listeners):  # each attack is fine alone, the two together are not
        results = [{"attack": p.name, "ok": True, "problems": []} for p in paths]
        return results, (["processes left behind"] if len(paths) > 1 else [])

    monkeypatch.setattr(attack_suite, "run_batch", together_only)
    results = attack_suite.run_attacks([a, b], [], None)
    assert [r["ok"] for r in results] == [True, False] and "reached a later one" in results[1]["problems"][-1]
