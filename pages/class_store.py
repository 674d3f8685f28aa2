"""The app's side of the class store: the one ``ClassStore``, who this session is in its class, and the
recording hook that ``pages/runs.py`` calls with every finished grading.

Recording happens here, on the server, from the grader's ``Report``: the browser only ever sends its
learner token (once, when a page loads), which says *who*; *what* they got comes from the grading itself.
When the database cannot be reached, grading goes on; the hook says the result was not recorded, and stops
trying for ``RETRY_AFTER_S`` so a dead database does not add its connection timeout to every Run.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import streamlit as st

import classroom
from classroom import ClassStore, Member
from grader.records import Report

log = logging.getLogger(__name__)
MEMBER_KEY = "jaxplay_class_member"
RETRY_AFTER_S = 15.0
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
    return (f"**The class database cannot be reached** ({reason}). Run and Submit work as usual, but results are "
            "**not recorded** on the class board until it is back.")


def call(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on the store; raises ``StoreDown`` (with a message for the page) when the database fails.
    Learner mistakes (``NicknameTaken``, ``UnknownClass``, ``BadNickname``) pass through."""
    with _health_lock:
        if time.monotonic() < _health.down_until:
            raise StoreDown(_health.reason)
    try:
        result = fn(*args)
    except (classroom.NicknameTaken, classroom.UnknownClass, classroom.BadNickname):
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
    """The learner this browser is in its class, as verified from its token (``class_bar``), or None."""
    return st.session_state.get(MEMBER_KEY)


def set_member(value: Member | None) -> None:
    st.session_state[MEMBER_KEY] = value


@dataclass(frozen=True)
class RecordNote:
    """What became of one grading's result on the class board."""

    recorded: bool
    message: str


def record(who: Member | None, problem: str, kind: str, code: str, report: Report) -> RecordNote | None:
    """The recording hook: keep this Run's or Submit's result for ``who``'s class. Called on the grading's
    thread with the grader's report (whatever produced it); None when the session is in no class."""
    if who is None or kind not in classroom.results.KINDS:
        return None
    try:
        kept = call(store().record, who, classroom.outcome(problem, kind, code, report))
    except StoreDown as exc:
        return RecordNote(False, down_message(str(exc)))
    if not kept:
        return RecordNote(False, f"Not recorded: class {who.class_code} no longer exists (its teacher has "
                                 "forgotten it). Leave it from the class menu at the top.")
    return RecordNote(True, f"Recorded for class {who.class_code}.")
