"""The app's side of the class store: the one ``ClassStore``, who this session is in its class, and the
recording hook that ``pages/services/runs.py`` calls with every finished grading.

Recording happens here, on the server, from the grader's ``Report``: the browser only ever sends its
learner token, which says *who*; *what* they got comes from the grading itself. The hook never waits on the
database: it puts the record in the outbox (``classroom.outbox``: local disk, written to the database in
order, once, when it can be) and waits at most ``RECORD_WAIT_S`` to say "recorded"; otherwise the learner
reads "recorded later". A page's own queries (the board, a join) are bounded by ``CALL_TIMEOUT_S`` however
the database fails (a hung server answers nothing), and after a failure the pages skip the database for
``RETRY_AFTER_S``.

Who this session is comes from the ``jaxplay_class`` cookie (class code and token), which the browser sends
with the page's first request, so the first script run of a reopened or reconnected page knows its class
however slowly the browser's storage answers; the browser's storage is the fallback.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Callable, TypeVar
from urllib.parse import unquote

import streamlit as st

import classroom
from classroom import ClassStore, Member, identity
from classroom.db import private_dir
from classroom.outbox import ASIDE, GONE, PENDING, RECORDED, UNSTORED, Outbox
from grader.records import Report

log = logging.getLogger(__name__)
MEMBER_KEY = "jaxplay_class_member"
CLAIM_KEY = "jaxplay_class_claim"
COOKIE = "jaxplay_class"
RETRY_AFTER_S = 5.0
CALL_TIMEOUT_S = 6.0
"""The longest a page waits on the database for one operation (a connection's 5 s timeout fits in it)."""
RECORD_WAIT_S = 0.3
"""How long a finished grading waits for its record to reach the database before it says "recorded later"."""
T = TypeVar("T")


class StoreDown(RuntimeError):
    """The class database cannot be reached (or refused the operation); ``str`` is for the page."""


def database_url() -> str:
    """``JAXPLAY_DB`` from the environment, else from Streamlit's secrets (a hosted app's
    ``.streamlit/secrets.toml`` or the host's Secrets box), else the SQLite file in ``JAXPLAY_DATA``."""
    url = os.environ.get("JAXPLAY_DB", "").strip()
    if not url:
        try:
            url = str(st.secrets.get("JAXPLAY_DB", "") or "").strip()
        except Exception:  # noqa: BLE001 - no secrets file: the default
            url = ""
    return classroom.database_url({**os.environ, "JAXPLAY_DB": url})


_stores: dict[str, ClassStore] = {}
_stores_lock = threading.Lock()


def store() -> ClassStore:
    """The process's store for the configured database (also called on grading threads, outside any script
    run, so it is a plain cache rather than ``st.cache_resource``)."""
    url = database_url()
    with _stores_lock:
        if url not in _stores:
            _stores[url] = ClassStore(url)
        return _stores[url]


@dataclass
class _Health:
    down_until: float = 0.0
    reason: str = ""


_health = _Health()
_health_lock = threading.Lock()


def down_message(reason: str) -> str:
    return (f"**The class database cannot be reached** ({reason}). Run and Submit work as usual: results are "
            "kept on the server and **recorded on the class board when it is back**.")


_calls = ThreadPoolExecutor(max_workers=32, thread_name_prefix="class-db")


def call(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on the store, within ``CALL_TIMEOUT_S``; raises ``StoreDown`` (with a message for the page)
    when the database fails or does not answer. Learner mistakes (``NicknameTaken``, ``UnknownClass``,
    ``BadNickname``, ``ClassFull``) pass through."""
    with _health_lock:
        if time.monotonic() < _health.down_until:
            raise StoreDown(_health.reason)
    try:
        try:
            result = _calls.submit(fn, *args).result(timeout=CALL_TIMEOUT_S)
        except FutureTimeout:
            raise TimeoutError(f"no answer in {CALL_TIMEOUT_S:g} s") from None
    except (classroom.NicknameTaken, classroom.UnknownClass, classroom.BadNickname, classroom.ClassFull):
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the database is the same to a page
        reason = f"{type(exc).__name__} on {classroom.describe(store().url)}"
        log.warning("class database failed: %s: %s", reason, exc)
        with _health_lock:
            _health.down_until, _health.reason = time.monotonic() + RETRY_AFTER_S, reason
        raise StoreDown(reason) from exc
    with _health_lock:
        _health.down_until = 0.0
    return result


def member() -> Member | None:
    """Who this session records Runs and Submits for: the learner verified from its token (``class_bar``),
    else, until the store has answered, the class and token this browser claims (its cookie, or its storage):
    a ``Member`` with ``learner_id`` 0, which the outbox's writer resolves by the token's digest (a token no
    learner holds records nothing). None outside a class."""
    me = st.session_state.get(MEMBER_KEY)
    if me is not None:
        return me
    claim = claimed()
    if claim is None:
        return None
    code, token = claim
    return Member(code, 0, "", identity.digest(token))


def member_of(saved: object) -> Member | None:
    """The learner a browser's saved class (``{"code": ..., "token": ...}``) claims to be, as ``member`` gives it
    before the store has answered (the page may ask before the class bar has read the claim)."""
    if not isinstance(saved, dict) or not isinstance(saved.get("token"), str):
        return None
    code = identity.normalize_code(saved.get("code"))
    return Member(code, 0, "", identity.digest(saved["token"])) if code and saved["token"] else None


def set_member(value: Member | None) -> None:
    st.session_state[MEMBER_KEY] = value


def claimed() -> tuple[str, str] | None:
    """(class code, token) this browser says it holds: the session's (from storage, once read), else its
    cookie, which the first script run already has."""
    claim = st.session_state.get(CLAIM_KEY)
    if claim is not None:
        return claim or None
    return cookie_claim()


def set_claim(value: tuple[str, str] | None) -> None:
    """What the browser's storage says (``()`` once it says there is no class, so the cookie no longer counts)."""
    st.session_state[CLAIM_KEY] = value if value else ()


def cookie_claim() -> tuple[str, str] | None:
    try:
        raw = (st.context.cookies or {}).get(COOKIE)
    except Exception:  # noqa: BLE001 - no request context (AppTest, a thread)
        return None
    return parse_claim(raw)


def parse_claim(raw: object) -> tuple[str, str] | None:
    """The cookie's value (URL-encoded JSON ``{"code": ..., "token": ...}``) as (code, token), or None."""
    if not isinstance(raw, str) or not raw or len(raw) > 1000:
        return None
    try:
        data = json.loads(unquote(raw))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    code, token = identity.normalize_code(data.get("code")), data.get("token")
    return (code, token) if code and isinstance(token, str) and 8 <= len(token) <= 200 else None


_outboxes: dict[str, Outbox] = {}


def outbox() -> Outbox:
    """The process's outbox (its writer started): ``JAXPLAY_DATA/outbox``, written to the configured database."""
    folder = str((classroom.data_dir() / "outbox").resolve())
    with _stores_lock:
        box = _outboxes.get(folder)
        if box is None:
            private_dir(classroom.data_dir())  # the data folder itself 0700, not only the outbox in it
            box = _outboxes[folder] = Outbox(folder, store)
    return box.start()


@dataclass(frozen=True)
class RecordNote:
    """What became of one grading's result on the class board (asked of the outbox each time it is read)."""

    class_code: str
    uid: str
    box: Any = None

    @property
    def state(self) -> str:
        return self.box.status(self.uid) if self.box is not None else GONE

    @property
    def recorded(self) -> bool:
        return self.state == RECORDED

    @property
    def message(self) -> str:
        state = self.state
        if state == RECORDED:
            return f"Recorded for class {self.class_code}."
        if state == PENDING:
            return (f"**Recorded later** · the class database is not answering, so this result is kept on the "
                    f"server and reaches class {self.class_code}'s board as soon as the database is back.")
        if state == UNSTORED:
            return (f"Not recorded: the class database refused this result again and again, so it is kept on the "
                    f"server instead, and class {self.class_code}'s board counts it as a record that could not be "
                    "stored. Your verdict above is as graded.")
        return (f"Not recorded: class {self.class_code} no longer knows you (its teacher forgot the class or "
                "removed you from it). Leave it from the class menu at the top.")


def record(who: Member | None, problem: str, kind: str, code: str, report: Report,
           uid: str | None = None) -> RecordNote | None:
    """The recording hook: keep this Run's or Submit's result for ``who``'s class, under the attempt id
    ``uid`` (the one the learner's browser holds while it waits for the verdict). Called on the grading's
    thread with the grader's report (whatever produced it); None when the session is in no class. Never
    raises and never waits on the database longer than ``RECORD_WAIT_S``."""
    if who is None or kind not in classroom.results.KINDS:
        return None
    try:
        box = outbox()
        uid = box.put(who, classroom.outcome(problem, kind, code, report), uid=uid)
    except Exception:  # noqa: BLE001 - a full or read-only disk: say so, the verdict goes on
        log.exception("class outbox could not keep a record")
        return RecordNote(who.class_code, "", None)
    box.wait(uid, RECORD_WAIT_S)
    return RecordNote(who.class_code, uid, box)


def waiting(class_code: str) -> tuple[int, float, bool]:
    """(records of the class waiting in this server's outbox, seconds the oldest has waited, whether the
    database is refusing writes: False when the writer's last write went in and only a refused record waits
    its next try)."""
    try:
        box = outbox()
        count, oldest = box.waiting(class_code)
    except OSError:
        return 0, 0.0, False
    return count, oldest, bool(box.error)


def aside_folder() -> str:
    """Where records that could not be stored are kept, as a teacher reads it."""
    return str(classroom.data_dir() / "outbox" / ASIDE)


@dataclass(frozen=True)
class Recorded:
    """What the class recorded of one attempt, as a reconnected learner's page shows it."""

    verdict: str
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    failure: str
    code: str
    kind: str
    at: Any
    state: str
    """``recorded`` (on the board), ``pending`` (in this server's outbox) or ``unstored`` (kept aside)."""


def recorded(who: Member | None, uid: str) -> Recorded | None:
    """The attempt ``uid`` as the class recorded it for ``who`` (from this server's outbox while it waits, else
    from the database); None if it was never recorded. Raises ``StoreDown`` when the database cannot say."""
    if who is None or not uid:
        return None
    entry = outbox().find(uid)
    if entry is not None and entry.get("token_hash") == who.token_hash:
        o = entry.get("outcome") or {}
        return Recorded(str(o.get("verdict", "")), tuple(o.get("passed") or ()), tuple(o.get("failed") or ()),
                        str(o.get("failure", "")), str(o.get("code", "")), str(o.get("kind", "run")),
                        entry.get("at"), entry["state"])
    found = call(store().attempt_of, who.class_code, who.token_hash, uid)
    if found is None:
        return None
    code = call(store().code_of, who.class_code, found.id) or ""
    return Recorded(found.verdict, found.passed, found.failed, found.failure, code, found.kind, found.at, RECORDED)
