"""This browser's progress: the code of each problem, its last verdict, which problems it has solved, and
the learner's display preferences (presenter layout, editor font size and key bindings).

The truth lives in the browser's ``localStorage`` (see ``browser_bridge``), so it survives reloads and
server restarts and nothing personal is kept on the server. This session keeps a copy in session state,
filled once from the browser, updated as the learner works, and written back through the bridge.
"""
from __future__ import annotations

import json
import time
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from grader.records import Report
from pages.services.browser_bridge import ITEMS, bridge, write

KEY = "jaxplay_progress"
MAX_VERDICT_CHARS = 400_000
"""A saved verdict larger than this (a huge jaxpr) is saved without its jaxpr text."""
DEFAULT_PREFS = {"presenter": False, "font_size": 14, "keybinding": "Default", "live_completion": False, "wrap": True}


def _state() -> dict[str, Any]:
    state = st.session_state.setdefault(KEY, {"loaded": False, "code": {}, "solved": set(), "pending": {},
                                              "waited": 0})
    state.setdefault("verdicts", {})
    state.setdefault("prefs", dict(DEFAULT_PREFS))
    state.setdefault("items", {})
    return state


def loaded() -> bool:
    """Whether the browser's saved progress has arrived (or was given up on)."""
    return _state()["loaded"]


def give_up_waiting() -> None:
    """No JavaScript answer (blocked storage, old browser): carry on with an empty store."""
    _state()["loaded"] = True


def code(slug: str) -> str | None:
    return _state()["code"].get(slug)


def set_code(slug: str, text: str) -> None:
    _state()["code"][slug] = text


def forget_code(slug: str) -> None:
    """Back to the starter: drop the session copy and the browser's."""
    state = _state()
    state["code"].pop(slug, None)
    state["pending"].setdefault("code", {})[slug] = None


def save_verdict(slug: str, kind: str, code: str, report: Report, uid: str = "") -> None:
    """Keep a Run's or Submit's verdict in the browser, so a reload shows it again (``uid``: its attempt id)."""
    data = report.to_json(marks=True)
    text = json.dumps({"kind": kind, "code": code, "report": data, "uid": uid})
    if len(text) > MAX_VERDICT_CHARS:
        data["jaxpr_text"] = ""
        text = json.dumps({"kind": kind, "code": code, "report": data, "uid": uid})
    if len(text) > MAX_VERDICT_CHARS:
        return
    state = _state()
    state["verdicts"][slug] = text
    state["pending"].setdefault("verdict", {})[slug] = text


def saved_verdict(slug: str) -> tuple[str, str, Report] | None:
    """(kind, code, report) of the verdict this browser saved for a problem, if any and readable."""
    text = _state()["verdicts"].get(slug)
    if not isinstance(text, str):
        return None
    try:
        data = json.loads(text)
        return str(data["kind"]), str(data["code"]), Report.from_json(data["report"])
    except Exception:  # noqa: BLE001 - an old or edited entry: as if none was saved
        return None


def saved_verdict_uid(slug: str) -> str:
    """The attempt id of the verdict this browser saved for a problem ('' for none, or one saved before ids)."""
    try:
        return str(json.loads(_state()["verdicts"].get(slug) or "{}").get("uid") or "")
    except (ValueError, AttributeError):
        return ""


def inflight(slug: str) -> dict[str, Any] | None:
    """The Run or Submit this browser started on a problem and has no verdict of yet: ``uid``, ``kind`` and
    ``at`` (epoch seconds)."""
    entries = item("inflight")
    entry = entries.get(slug) if isinstance(entries, dict) else None
    return entry if isinstance(entry, dict) and isinstance(entry.get("uid"), str) else None


def set_inflight(slug: str, entry: dict[str, Any] | None) -> None:
    """Note (or, with None, forget) a problem's Run or Submit awaiting its verdict, in this browser."""
    entries = item("inflight")
    entries = dict(entries) if isinstance(entries, dict) else {}
    if entry is None:
        if slug not in entries:
            return
        entries.pop(slug)
    else:
        entries[slug] = entry
    save_item("inflight", entries or None)


def prefs() -> dict[str, Any]:
    """The learner's display preferences (a live dict: change it, then ``save_prefs``)."""
    return _state()["prefs"]


def save_prefs() -> None:
    _state()["pending"]["prefs"] = dict(_state()["prefs"])


def solved() -> set[str]:
    return set(_state()["solved"])


def mark_solved(slug: str) -> None:
    state = _state()
    state["solved"].add(slug)


def item(name: str) -> Any:
    """A value of ``browser_bridge.ITEMS`` as this browser keeps it (None when it has none)."""
    return _state()["items"].get(name)


def save_item(name: str, value: Any) -> None:
    """Keep ``value`` (JSON; None to forget) as item ``name`` in this browser."""
    state = _state()
    state["items"][name] = value
    state["pending"][name] = value


def sync(*, slug: str | None = None, editor_key: str | None = None,
         button_keys: tuple[str, ...] = ()) -> Any:
    """Mount the bridge and merge what the browser reported; returns its result."""
    state = _state()
    result = bridge(slug=slug, editor_key=editor_key, button_keys=button_keys,
                    live_completion=bool(state["prefs"].get("live_completion")))
    stored = result.get("stored") if hasattr(result, "get") else None
    if stored and not state.get("merged") and _this_session(stored):  # also after the page stopped waiting
        for s, text in (stored.get("code") or {}).items():
            if isinstance(text, str):
                state["code"].setdefault(s, text)
        state["solved"] |= {s for s in stored.get("solved") or [] if isinstance(s, str)}
        for s, text in (stored.get("verdict") or {}).items():
            if isinstance(text, str):
                state["verdicts"].setdefault(s, text)
        saved = stored.get("prefs")
        if isinstance(saved, dict):
            state["prefs"].update({k: v for k, v in saved.items() if k in DEFAULT_PREFS
                                   and isinstance(v, type(DEFAULT_PREFS[k]))})
        for name in ITEMS:
            if state["items"].get(name) is None:
                state["items"][name] = stored.get(name)
        state["loaded"] = state["merged"] = True
    return result


def _this_session(stored: dict[str, Any]) -> bool:
    """Whether the browser read ``stored`` for this server session. A page left open through a server restart
    reconnects with the state its bridge last reported, read when the page was loaded in the old session:
    without the verdicts saved since. The bridge reads its storage again for the new session (it sees the new
    session id); until that copy arrives, the old one must not be taken for this browser's progress."""
    ctx = get_script_run_ctx()
    own = stored.get("session") if isinstance(stored, dict) else None
    return own is None or ctx is None or own == ctx.session_id


RESEND_S = 3.0
"""A saved verdict or preference is written again in every script run for this long after its first write:
the browser draws only the last of several quick runs, so a write in a run that a click's rerun overtook
(a tab, a jump link) may never reach ``localStorage``. Writing the same value twice is harmless. (Code is
not repeated: the editor itself saves it as the learner types, and a repeated "forget" would erase that.)"""


def flush() -> None:
    """Write this run's changes to the browser (called once, at the end of every script run)."""
    state = _state()
    now = time.monotonic()
    recent = {k: v for k, v in state.setdefault("recent", {}).items() if now - v[1] < RESEND_S}
    changes: dict[str, Any] = {}
    for (kind, slug), (value, _) in recent.items():
        if slug is None:
            changes[kind] = value
        else:
            changes.setdefault(kind, {})[slug] = value
    for kind, value in state["pending"].items():
        if kind in ITEMS:
            changes[kind] = value
        elif isinstance(value, dict) and kind != "prefs":
            changes.setdefault(kind, {}).update(value)
        else:
            changes[kind] = value
    if state["solved"]:
        changes["solved"] = sorted(state["solved"])
    write(changes)
    # Only now: a rerun requested meanwhile stops the script inside ``write`` before its message is sent
    # (Streamlit checks for one before it enqueues an element), and the changes must wait for the next run.
    for kind, value in state["pending"].items():
        if kind == "prefs" or kind in ITEMS:
            recent[(kind, None)] = (value, now)
        elif kind == "verdict":
            recent.update({(kind, slug): (text, now) for slug, text in value.items()})
    state["recent"] = recent
    state["pending"] = {}
