"""Nothing a learner does is lost: every graded Run or Submit of a class goes through an outbox on local disk.

``put`` writes the record to a file of its own (in a 0700 folder, 0600, written whole then renamed into
place) and returns at once: the grading that made it never waits on the database. One writer thread per
process writes the files to the database in the order they were made, each under its attempt's unique id
(a retry after a lost answer keeps the first row and writes no second), and deletes a file only once its row
is in. While the database is down, stopped or hung, the files wait; the writer tries again every
``RETRY_S`` seconds, and files left by a server that stopped are written when it starts again.

The outbox holds the digest of the learner's token, never the token: its files say no more than the
database does.
"""
from __future__ import annotations

import datetime as dt
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
from classroom.results import Outcome
from classroom.store import ClassStore, Member, now

log = logging.getLogger(__name__)
RETRY_S = 1.0
"""Seconds between the writer's attempts while the database fails (a Run made during an outage is on the
board about this long after the database is back)."""

RECORDED, PENDING, GONE = "recorded", "pending", "gone"
"""What became of a record: in the database; waiting in the outbox; refused for good (the learner or class no
longer exists)."""


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
        self._thread: threading.Thread | None = None
        self._stopped = False

    # Producers

    def put(self, member: Member, result: Outcome, *, at: dt.datetime | None = None) -> str:
        """Keep one record for the database; returns its attempt id. Never touches the database."""
        uid = uuid.uuid4().hex
        entry = {"uid": uid, "class_code": member.class_code, "token_hash": member.token_hash,
                 "learner_id": member.learner_id, "at": (at or now()).isoformat(), "outcome": asdict(result)}
        with self._lock:
            self._seq += 1
            name = f"{time.time_ns():020d}-{os.getpid()}-{self._seq:08d}-{uid}.json"
            self._done[uid] = PENDING
        tmp = self.folder / f".{name}.tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(entry, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.folder / name)
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
        """Write every waiting record now, in order; False (and ``error`` set) at the first that fails."""
        for path in sorted(self.folder.glob("*.json")):
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:  # written by another process's writer meanwhile
                continue
            except ValueError:
                log.error("class outbox: unreadable record %s kept aside", path.name)
                path.rename(path.with_suffix(".bad"))
                continue
            try:
                kept = self._store().record_by(
                    entry["class_code"], entry.get("token_hash", ""), int(entry.get("learner_id") or 0),
                    Outcome(**{**entry["outcome"], "passed": tuple(entry["outcome"]["passed"]),
                               "failed": tuple(entry["outcome"]["failed"])}),
                    uid=entry["uid"], at=dt.datetime.fromisoformat(entry["at"]))
            except Exception as exc:  # noqa: BLE001 - any database failure: keep the file, try again later
                self.error = f"{type(exc).__name__}: {exc}"[:300]
                return False
            path.unlink(missing_ok=True)
            self.error = ""
            with self._changed:
                self._done[entry["uid"]] = RECORDED if kept else GONE
                self._changed.notify_all()
                if len(self._done) > 100_000:  # a long-running server: forget the oldest answers
                    for key in list(self._done)[:50_000]:
                        del self._done[key]
        return True

    def _run(self) -> None:
        while not self._stopped:
            self._wake.clear()
            ok = self.flush()
            self._wake.wait(RETRY_S if not ok else 30.0)
