"""``remove_tree``: removes anything a learner can leave in a scratch folder, never recurses, never raises,
never follows a link out, and stops at its deadline saying what is left."""
from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox.inside.cleanup import remove_tree


def _nest(top: Path, depth: int, name: str = "d") -> None:
    """``depth`` nested folders under ``top`` (far deeper than PATH_MAX allows as one path)."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            deeper = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = deeper
        with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as f:
            f.write("bottom")
    finally:
        os.close(fd)


def test_a_tree_of_5000_nested_folders_goes(tmp_path):
    top = tmp_path / "scratch"
    top.mkdir()
    _nest(top, 5000)
    report = remove_tree(top, deadline_s=300)  # about a second on a quiet disk; the test is of depth, not speed
    assert report.complete and not top.exists(), str(report)
    assert report.removed == 5002  # 5000 folders, the file at the bottom, the top


def test_width_odd_names_links_fifos_sockets_and_no_permissions(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("must survive")
    (outside / "sub").mkdir()
    (outside / "sub" / "keep2.txt").write_text("must survive")
    top = tmp_path / "scratch"
    top.mkdir()
    wide = top / "wide"
    wide.mkdir()
    for i in range(3000):
        (wide / f"f{i}").write_bytes(b"")
    for i in range(300):
        (wide / f"d{i}").mkdir()
    os.mkdir(os.fsencode(top) + b"/bad\xff\xfename\nwith newline")
    (top / "a\nb").write_text("x")
    open(os.fsencode(top) + b"/\x80\x81", "wb").close()
    os.symlink(outside, top / "link_to_outside_folder")
    os.symlink(outside / "keep.txt", top / "link_to_outside_file")
    os.symlink("/", top / "link_to_root")
    os.symlink(top / "nowhere", top / "dangling")
    os.mkfifo(top / "fifo")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(top / "sock"))
    locked = top / "locked"
    locked.mkdir()
    (locked / "inner").mkdir()
    (locked / "inner" / "secret").write_text("x")
    os.chmod(locked / "inner" / "secret", 0)
    os.chmod(locked / "inner", 0)
    os.chmod(locked, 0)
    os.chmod(top / "a\nb", 0)
    report = remove_tree(top, deadline_s=300)
    assert report.complete and not top.exists(), str(report)
    assert (outside / "keep.txt").read_text() == "must survive"
    assert (outside / "sub" / "keep2.txt").read_text() == "must survive"
    assert sorted(os.listdir(outside)) == ["keep.txt", "sub"]


def test_folders_without_permissions_go_for_their_owner_too(tmp_path):
    """As a user with no privilege over other files (the grader may run as one): chmod, then remove."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user")  # CI runs as root
    base = Path(tempfile.mkdtemp(prefix="jaxplay-cleanup-test-"))  # pytest's tmp_path is root's alone
    os.chmod(base, 0o777)
    top = base / "scratch"
    pid = os.fork()
    if pid == 0:  # a process of another user, owner of the tree and nothing else
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.mkdir(top)
            for d in ("a", "a/b", "a/b/c"):
                os.mkdir(top / d)
                (top / d / "f").write_text("x")
            os.chmod(top / "a/b/c", 0o000)
            os.chmod(top / "a/b", 0o000)
            os.chmod(top / "a", 0o100)
            report = remove_tree(top)
            code = 0 if report.complete and not os.path.lexists(top) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not top.exists()
    base.rmdir()


def test_a_folder_that_is_a_processs_working_folder_goes(tmp_path):
    top = tmp_path / "scratch"
    (top / "a" / "b").mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "30"], cwd=top / "a" / "b")
    here = os.getcwd()
    try:
        os.chdir(top / "a")  # ours too
        report = remove_tree(top)
    finally:
        os.chdir(here)
        sleeper.kill()
        sleeper.wait()
    assert report.complete and not top.exists(), str(report)


def test_a_deadline_stops_it_and_says_what_is_left_without_raising(tmp_path):
    top = tmp_path / "scratch"
    top.mkdir()
    _nest(top, 3000)
    started = time.monotonic()
    report = remove_tree(top, deadline_s=0.02)
    assert time.monotonic() - started < 2
    assert not report.complete and top.exists()
    assert "deadline" in str(report)
    assert remove_tree(top, deadline_s=300).complete  # a second pass finishes it


def test_it_never_raises(tmp_path):
    assert remove_tree(tmp_path / "never-there").complete
    (tmp_path / "file").write_text("x")
    assert remove_tree(tmp_path / "file").complete and not (tmp_path / "file").exists()
    os.symlink(tmp_path, tmp_path / "self")
    assert remove_tree(tmp_path / "self").complete and tmp_path.exists()  # the link goes, never its target
    report = remove_tree(None)  # type: ignore[arg-type]
    assert not report.complete and report.problems
    assert not remove_tree("/proc/1/root/nonsense\0x").complete
