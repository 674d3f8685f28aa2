"""Nothing a learner does is lost: every graded Run or Submit of a class goes through an outbox on local disk.

``put`` writes the record to a file of its own (in a 0700 folder, 0600, written whole then renamed into
place) and returns at once: the grading that made it never waits on the database. One writer thread per
process writes the files to the database in the order they were made, each under its attempt's unique id
(a retry after a lost answer keeps the first row and writes no second), and deletes a file only once its row
is in. While the database is down, stopped or hung, the files wait; the writer tries again every
``RETRY_S`` seconds, and files left by a server that stopped are written when it starts again.

No record blocks the others. Its texts are made storable before it is kept (``Outcome.storable``: NUL and
unpaired surrogates replaced, lengths bounded). When one record still fails, the writer asks the database
whether it takes writes at all (``ClassStore.writable``): if not, the database is down and every record
waits; if it does, the fault is that record's, which is tried again with a growing delay (``RETRY_S``
doubled each time, at most ``MAX_BACKOFF_S``) while the records after it are written, and after
``MAX_TRIES`` failures it is moved aside to ``aside/`` (kept on disk, never deleted) and counted for its
class (``ClassStore.note_unstored``), which the teacher's board shows.

The outbox holds the digest of the learner's token, never the token: its files say no more than the
database does.
"""
from __future__ import annotations

import datetime as dt
import glob
import json
import logging
import os
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from classroom.db import private_dir
from classroom.results import Outcome, storable
from classroom.store import ClassStore, Member, now

log = logging.getLogger(__name__)
RETRY_S = 1.0
"""Seconds between the writer's attempts while the database fails (a Run made during an outage is on the
board about this long after the database is back)."""

MAX_TRIES = 5
"""Failures of one record, while the database takes others, before it is moved aside."""
MAX_BACKOFF_S = 30.0
ASIDE = "aside"

RECORDED, PENDING, GONE, UNSTORED = "recorded", "pending", "gone", "unstored"
"""What became of a record: in the database; waiting in the outbox; refused for good (the learner or class no
longer exists); refused by the database again and again, so kept aside on disk and counted."""


class Outbox:
    """The records of one process waiting for ``store``, in ``folder``."""

    def __init__(self, folder: Path, store: ClassStore | Callable[[], ClassStore]) -> None:
        self.folder = private_dir(Path(folder))
        self._store = store if callable(store) else (lambda: store)
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._done: dict[str, str] = {}
        self._changed = threading.Condition(self._lock)
        self.error = ""
        """Why the last write failed ('' after a success)."""
        self._seq = 0
        self._retry_at: dict[str, float] = {}
        """A refused record's file name -> when the writer may try it again (monotonic)."""
        self._thread: threading.Thread | None = None
        self._stopped = False

    # Producers

    def put(self, member: Member, result: Outcome, *, at: dt.datetime | None = None, uid: str | None = None) -> str:
        """Keep one record for the database (its texts made storable first); returns its attempt id (``uid``,
        or a new one). Never touches the database."""
        uid = storable(uid, 40) if uid else uuid.uuid4().hex
        entry = {"uid": uid, "class_code": storable(member.class_code, 16),
                 "token_hash": storable(member.token_hash, 64), "learner_id": int(member.learner_id or 0),
                 "at": (at or now()).isoformat(), "outcome": asdict(result.storable()), "tries": 0}
        with self._lock:
            self._seq += 1
            name = f"{time.time_ns():020d}-{os.getpid()}-{self._seq:08d}-{uid}.json"
            self._done[uid] = PENDING
        _write(self.folder / name, entry)
        self.start()
        self._wake.set()
        return uid

    def status(self, uid: str) -> str:
        with self._lock:
            return self._done.get(uid, PENDING)

    def wait(self, uid: str, timeout: float) -> str:
        """The record's status once written or after ``timeout`` seconds, whichever is first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._done.get(uid, PENDING) == PENDING:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return self._done.get(uid, PENDING)

    def pending(self) -> int:
        """Records waiting in the folder (any process's)."""
        return sum(1 for p in self.folder.glob("*.json"))

    def waiting(self, class_code: str | None = None) -> tuple[int, float]:
        """(records waiting, seconds the oldest has waited) in the folder, of one class or of all."""
        count, oldest = 0, 0.0
        now_ns = time.time_ns()
        for path in self.folder.glob("*.json"):
            if class_code is not None:
                try:
                    if json.loads(path.read_text(encoding="utf-8")).get("class_code") != class_code:
                        continue
                except (OSError, ValueError):
                    continue
            count += 1
            try:
                oldest = max(oldest, (now_ns - int(path.name.split("-", 1)[0])) / 1e9)
            except ValueError:
                pass
        return count, oldest

    def find(self, uid: str) -> dict | None:
        """The entry of record ``uid`` while it waits in the folder or lies aside (None once written or
        unknown): a reconnected page asks what a Run it never saw finish got."""
        for folder in (self.folder, self.folder / ASIDE):
            for path in folder.glob(f"*-{glob.escape(uid)}.json"):
                try:
                    entry = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                entry["state"] = PENDING if folder == self.folder else UNSTORED
                return entry
        return None

    def aside(self) -> int:
        """Records moved aside (the database refused them again and again), kept in ``aside/``."""
        return sum(1 for _ in (self.folder / ASIDE).glob("*.json"))

    # The writer

    def start(self) -> "Outbox":
        """Start the writer thread (once); it also writes whatever an earlier run of the server left."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stopped = False
                self._thread = threading.Thread(target=self._run, name="class-outbox", daemon=True)
                self._thread.start()
        self._wake.set()
        return self

    def stop(self) -> None:
        self._stopped = True
        self._wake.set()

    def flush(self) -> bool:
        """Write every waiting record now, in order; False (and ``error`` set) when the database takes no write.
        A record that fails while the database takes writes waits its turn again (``_retry_at``), and the
        ones after it go on; after ``MAX_TRIES`` failures it is moved aside and counted."""
        self._report_aside()
        for path in sorted(self.folder.glob("*.json")):
            if self._retry_at.get(path.name, 0.0) > time.monotonic():
                continue
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                uid = str(entry["uid"])
            except FileNotFoundError:  # written by another process's writer meanwhile
                continue
            except (ValueError, KeyError, TypeError):
                log.error("class outbox: unreadable record %s kept aside", path.name)
                path.rename(path.with_suffix(".bad"))
                continue
            try:
                kept = self._store().record_by(
                    str(entry["class_code"]), str(entry.get("token_hash") or ""), int(entry.get("learner_id") or 0),
                    _outcome(entry["outcome"]), uid=uid, at=dt.datetime.fromisoformat(entry["at"]))
            except Exception as exc:  # noqa: BLE001 - the database's failure, or this record's
                reason = f"{type(exc).__name__}: {exc}"[:300]
                try:
                    self._store().writable()
                except Exception as down:  # noqa: BLE001 - the database takes no write: every record waits
                    self.error = f"{type(down).__name__}: {down}"[:300]
                    return False
                self._refused(path, entry, reason)
                continue
            self._retry_at.pop(path.name, None)
            path.unlink(missing_ok=True)
            self.error = ""
            self._settle(uid, RECORDED if kept else GONE)
        return True

    def _refused(self, path: Path, entry: dict, reason: str) -> None:
        """The database takes writes but not this record: try it again later, or, after ``MAX_TRIES``, move it
        aside and count it for its class."""
        tries = int(entry.get("tries") or 0) + 1
        log.warning("class outbox: record %s refused (%d of %d): %s", path.name, tries, MAX_TRIES, reason)
        if tries < MAX_TRIES:
            entry["tries"], entry["error"] = tries, reason
            try:
                _write(path, entry)
            except OSError:
                pass
            self._retry_at[path.name] = time.monotonic() + min(MAX_BACKOFF_S, RETRY_S * 2 ** tries)
            return
        aside = private_dir(self.folder / ASIDE)
        entry.update(tries=tries, error=reason, reported=False)
        try:
            _write(aside / path.name, entry)
            path.unlink(missing_ok=True)
        except OSError:
            log.exception("class outbox: could not move %s aside", path.name)
            return
        self._retry_at.pop(path.name, None)
        self._settle(str(entry["uid"]), UNSTORED)
        self._report_aside()

    def _report_aside(self) -> None:
        """Count each record moved aside for its class, once (kept for a later pass while the database is down)."""
        folder = self.folder / ASIDE
        if not folder.is_dir():
            return
        for path in sorted(folder.glob("*.json")):
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                if entry.get("reported"):
                    continue
                self._store().note_unstored(str(entry["class_code"]), str(entry["uid"]),
                                            dt.datetime.fromisoformat(entry["at"]), str(entry.get("error", "")))
            except FileNotFoundError:
                continue
            except Exception as exc:  # noqa: BLE001 - the database is down again: next pass
                log.warning("class outbox: could not count %s as unstored: %s", path.name, exc)
                return
            entry["reported"] = True
            try:
                _write(path, entry)
            except OSError:
                pass
            self._settle(str(entry["uid"]), UNSTORED)

    def _settle(self, uid: str, state: str) -> None:
        with self._changed:
            self._done[uid] = state
            self._changed.notify_all()
            if len(self._done) > 100_000:  # a long-running server: forget the oldest answers
                for key in list(self._done)[:50_000]:
                    del self._done[key]

    def _run(self) -> None:
        while not self._stopped:
            self._wake.clear()
            try:
                ok = self.flush()
            except Exception:  # noqa: BLE001 - a full disk, a vanished folder: the thread must not die
                log.exception("class outbox: the writer's pass failed")
                ok = False
            waits = [t - time.monotonic() for t in self._retry_at.values()]
            self._wake.wait(RETRY_S if not ok else max(0.05, min([30.0, *waits])))


def _outcome(data: dict) -> Outcome:
    """An entry's outcome (old entries included: missing fields take a neutral value)."""
    return Outcome(problem=str(data.get("problem", "")), kind=str(data.get("kind", "")),
                   verdict=str(data.get("verdict", "")), passed=tuple(str(r) for r in data.get("passed") or ()),
                   failed=tuple(str(r) for r in data.get("failed") or ()), failure=str(data.get("failure", "")),
                   code=str(data.get("code", "")), elapsed_s=float(data.get("elapsed_s") or 0.0))


def _write(path: Path, entry: dict) -> None:
    """``entry`` as ``path``: written whole to a temporary file, synced, then renamed into place (0600)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(entry, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
