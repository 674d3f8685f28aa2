"""Removing a folder whatever a learner left in it: ``remove_tree(path)`` never raises and never recurses.

A run's scratch folder can hold anything its code could make: thousands of nested folders (deeper than
``PATH_MAX`` and than Python's recursion limit: ``shutil.rmtree`` recurses once per level), a million
entries, names with newlines or bytes that are not UTF-8, symlinks (to folders outside, too), fifos,
sockets, files and folders without permissions, a folder that is some process's working folder.

The walk holds two file descriptors (the folder itself and the one it is in), never a path longer than one
name: it goes down with ``openat(O_NOFOLLOW)`` and back up through ``..``, checking that ``..`` is the
folder it came from (so a folder moved meanwhile cannot take it outside the tree). A symlink is removed,
never followed; a folder it cannot enter or empty is made ``0700`` first (through ``/proc/self/fd``, on a
descriptor opened without following links). It stops at a deadline and says what is left.

Standard library only: the fork server (``zygote.py``) uses it inside the sandbox, the grader outside.
"""
import errno
import os
import stat
import time
from dataclasses import dataclass, field

DEFAULT_DEADLINE_S = 10.0

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH_FLAGS = getattr(os, "O_PATH", 0) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Cleanup:
    """What ``remove_tree`` did."""

    path: str
    removed: int = 0
    """Entries removed (files, links, fifos, sockets and folders, the top one included)."""
    complete: bool = False
    """Whether ``path`` is gone (or was never there)."""
    seconds: float = 0.0
    problems: list = field(default_factory=list)
    """Why something is left, at most a few lines (a deadline, a mount point, an error)."""

    def __str__(self):
        if self.complete:
            return "removed %s (%d entries, %.2f s)" % (self.path, self.removed, self.seconds)
        return "could not remove all of %s after %d entries in %.2f s: %s" % (
            self.path, self.removed, self.seconds, "; ".join(self.problems) or "unknown")


def _note(report, text):
    if len(report.problems) < 5:
        report.problems.append(text)


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass


def _make_open(name, dir_fd):
    """chmod 0700 the folder ``name`` in ``dir_fd`` without following a link there."""
    fd = os.open(name, _PATH_FLAGS, dir_fd=dir_fd)
    try:
        os.chmod("/proc/self/fd/%d" % fd, 0o700)
    finally:
        _close(fd)


def _open_dir(name, dir_fd):
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        _make_open(name, dir_fd)
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _identity(fd):
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _empty_of_non_folders(fd, report, deadline):
    """Unlink every entry of folder ``fd`` that is not a folder; return the names of its folders."""
    folders = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if time.monotonic() > deadline:
                    break
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    folders.append(entry.name)
                    continue
                try:
                    os.unlink(entry.name, dir_fd=fd)
                    report.removed += 1
                except FileNotFoundError:
                    pass
                except IsADirectoryError:  # replaced by a folder meanwhile
                    folders.append(entry.name)
                except OSError as exc:
                    _note(report, "%r: %s" % (entry.name, exc.strerror))
    except OSError as exc:
        _note(report, "listing: %s" % exc.strerror)
    return folders


def remove_tree(path, deadline_s=DEFAULT_DEADLINE_S):
    """Remove ``path`` and everything in it (a symlink or file at ``path`` is just unlinked); give up after
    ``deadline_s`` seconds. Never raises (anything but ``BaseException``s like ``KeyboardInterrupt``);
    returns a ``Cleanup`` saying what it did."""
    started = time.monotonic()
    report = Cleanup(str(path))
    try:
        _remove(os.fsdecode(path), report, started + deadline_s)
    except Exception as exc:  # noqa: BLE001 - the contract: report, never raise
        _note(report, "%s: %s" % (type(exc).__name__, exc))
    try:
        os.lstat(path)
        report.complete = False
    except FileNotFoundError:
        report.complete = True
    except Exception as exc:  # noqa: BLE001
        _note(report, "%s: %s" % (type(exc).__name__, exc))
    report.seconds = time.monotonic() - started
    return report


def _remove(path, report, deadline):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        report.removed += 1
        return
    parent_path, top_name = os.path.split(os.path.normpath(path))
    parent_fd = os.open(parent_path or ".", _DIR_FLAGS)
    try:
        _remove_folder(parent_fd, top_name, report, deadline)
        if not os.path.lexists(path):
            return
        try:
            os.rmdir(top_name, dir_fd=parent_fd)
            report.removed += 1
        except FileNotFoundError:
            pass
        except OSError as exc:
            _note(report, "%s: %s" % (path, exc.strerror))
    finally:
        _close(parent_fd)


def _remove_folder(parent_fd, top_name, report, deadline):
    """Empty folder ``top_name`` of ``parent_fd``: depth first, one level's folder names kept per level."""
    top = _open_dir(top_name, parent_fd)
    root_id = _identity(top)
    cur = top
    # per level below the top: (name in its parent, (dev, ino) of the folder, folders still to visit in it)
    names, ids, todo = [], [root_id], [None]
    rescans = 0
    try:
        while True:
            if time.monotonic() > deadline:
                _note(report, "stopped at the deadline")
                return
            if todo[-1] is None:  # first visit: unlink what is not a folder, note the folders
                try:
                    os.fchmod(cur, 0o700)
                except OSError:
                    pass
                todo[-1] = _empty_of_non_folders(cur, report, deadline)
            if todo[-1]:
                name = todo[-1].pop()
                try:
                    fd = _open_dir(name, cur)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    if exc.errno in (errno.ENOTDIR, errno.ELOOP):  # replaced by something else meanwhile
                        try:
                            os.unlink(name, dir_fd=cur)
                            report.removed += 1
                        except OSError:
                            pass
                    else:
                        _note(report, "%r: %s" % (name, exc.strerror))
                    continue
                _close(cur) if cur != top else None
                cur = fd
                names.append(name)
                ids.append(_identity(fd))
                todo.append(None)
                continue
            if not names:  # the top folder is empty (or all that is left could not be removed)
                return
            # go up: ``..`` must be the folder we came down from
            up = os.open("..", _DIR_FLAGS, dir_fd=cur)
            if _identity(up) != ids[-2]:
                _close(up)
                _note(report, "a folder moved during the removal")
                if rescans > 3:
                    return
                rescans += 1
                _close(cur)
                cur = top
                names, ids, todo = [], [root_id], [None]
                continue
            _close(cur)
            cur = up
            name = names.pop()
            ids.pop()
            todo.pop()
            try:
                os.rmdir(name, dir_fd=cur)
                report.removed += 1
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno == errno.ENOTEMPTY and rescans <= 3:  # something appeared meanwhile: look again
                    rescans += 1
                    todo[-1] = [name] + (todo[-1] or [])
                else:
                    _note(report, "%r: %s" % (name, exc.strerror))
    finally:
        if cur != top:
            _close(cur)
        _close(top)
