"""The isolation status, for whoever asks: a small badge at the foot of every page, details in an expander.

Learners need none of it to practise, so it never takes room from the statement or the editor (no sidebar);
an operator reads the details here or, better, from ``python -m grader doctor``.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from grader import sandbox
from grader.queue import queue_url
from pages.views.markup import plain


@st.cache_resource(ttl=600, show_spinner=False)
def _isolation() -> dict[str, Any]:
    return sandbox.probe()


@st.cache_data(ttl=15, show_spinner=False)
def _queue_isolation(url: str) -> dict[str, Any]:
    """The grading workers' layers (they run the code when the app has a queue), as ``_isolation`` gives
    this machine's: a layer is on only if it is on every worker."""
    from grader.queue.client import workers
    try:
        found = workers(url)
    except Exception as exc:  # noqa: BLE001 - Redis unreachable: say so, keep the page
        return {"layers": {}, "missing": ["queue"], "workers": 0,
                "note": f"The grading queue cannot be reached ({type(exc).__name__})."}
    off: dict[str, list[str]] = {}  # layer -> "worker: why" wherever it is off
    for w in found:
        for name, v in w["layers"].items():
            off.setdefault(name, []).extend([] if v["ok"] else [f"{w['name']}: {v['detail']}"])
    layers = {name: {"ok": not where, "detail": "off on " + "; ".join(where[:4]) if where
                     else f"on every one of the {len(found)} grading workers"} for name, where in off.items()}
    note = (f"{len(found)} grading worker process{'es' if len(found) != 1 else ''} serve this app's queue; each "
            "checked its sandbox before serving and refuses where a required layer is missing. The app machine "
            "runs no learner code." if found else
            "No grading worker serves this app's queue now: Run and Submit wait, then say no grader took them.")
    return {"layers": layers, "missing": [] if found else ["workers"], "workers": len(found), "note": note}


def _info() -> dict[str, Any]:
    url = queue_url()
    return _queue_isolation(url) if url else _isolation()


def status() -> tuple[str, str]:
    """(colour, words) of the badge: green when every layer works, orange when some are off, red when a
    required one is missing (then no code runs at all). With a queue, the layers are the workers'."""
    info = _info()
    off = [name for name, v in info["layers"].items() if not v["ok"]]
    if "workers" in info and info["missing"]:
        return "red", "No grading workers" if info["missing"] == ["workers"] else "Grading queue unreachable"
    if info["missing"]:
        return "red", "Sandbox unavailable"
    if off:
        return "orange", f"Sandboxed ({len(off)} layer{'s' if len(off) != 1 else ''} off)"
    return "green", "Sandboxed" + (f" ({info['workers']} grading workers)" if "workers" in info else "")


def footer() -> None:
    """The badge, and the layers behind it in a closed expander."""
    info = _info()
    colour, words = status()
    with st.container(key="isolation-footer"):
        st.markdown(f":{colour}-badge[:material/shield: {words}]")
        with st.expander("Isolation details (for operators)"):
            st.caption(plain(info["note"]))
            for name, v in info["layers"].items():
                st.markdown(f"{'✓' if v['ok'] else '✗'} **{plain(name)}**: {plain(v['detail'])}")
            st.caption("Check a deployment with `python -m grader doctor`.")
