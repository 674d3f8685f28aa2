"""``/class``: a teacher names a class (or not) and presses **Start a class**; the page then shows the code
to read off the projector, the join link (``?class=CODE``) and the board link (``/board?class=CODE&key=KEY``,
whose key is shown here only). The classes started in this browser are kept in it, with their board links.
"""
from __future__ import annotations

import html
import re
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

import problems
from classroom.identity import MAX_CLASS_NAME
from classroom.store import DEFAULT_MAX_LEARNERS, MAX_MAX_LEARNERS
from pages.services import class_store, progress
from pages.services.class_store import StoreDown
from pages.views.markup import plain

STARTED_KEY = "jaxplay_class_started"
MAX_KEPT = 20
CSS = """
.jaxplay-class-code { font-size: 4.5rem; font-weight: 800; letter-spacing: 0.2em; line-height: 1.1; margin: 0.2rem 0; }
.jaxplay-class-link a { font-size: 1.5rem; font-weight: 600; }
.jaxplay-join-link { overflow-wrap: normal; word-break: normal; }
.jaxplay-join-link .jaxplay-code-part { white-space: nowrap; }
"""


def base_url() -> str:
    """The app's address as the browser sees it (``st.context.url`` less this page's path); '' if unknown,
    which leaves links relative to the server."""
    parts = urlsplit(st.context.url or "")
    if not parts.scheme or not parts.netloc:
        return ""
    path = parts.path.rstrip("/")
    for page in ("/class", "/board"):
        if path.endswith(page):
            path = path[: -len(page)]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def join_url(code: str, problem: str = "") -> str:
    """The join link: Home, or the problem being taught (``/<problem>?class=CODE``) when there is one."""
    return f"{base_url()}/{problem}?class={code}" if problem else f"{base_url()}/?class={code}"


def board_url(code: str, key: str) -> str:
    return f"{base_url()}/board?class={code}&key={key}"


def _link(url: str, text: str | None = None) -> str:
    return f'<a href="{html.escape(url, quote=True)}">{html.escape(text or url)}</a>'


def link_html(url: str) -> str:
    """A join link for a projector: it may wrap after ``/`` and ``?``, never inside a word or the class code
    (the code is one unbreakable piece)."""
    head, sep, code = url.rpartition("?class=")
    if not sep:
        head, code = url, ""
    pieces = re.split(r"(?<=[/?])", head + sep)
    shown = "<wbr>".join(html.escape(piece) for piece in pieces if piece)
    if code:
        shown += f'<span class="jaxplay-code-part">{html.escape(code)}</span>'
    return f'<a class="jaxplay-join-link" href="{html.escape(url, quote=True)}">{shown}</a>'


def render() -> None:
    progress.sync()
    st.html(f"<style>{CSS}</style>")
    st.title("Teach a class")
    st.markdown("Project a problem, have the class join with a link or a code, and watch who passes which "
                "requirement, live. Learners' code is graded as always; the server records what each Run and "
                "Submit got, under a nickname they choose.")
    with st.container(border=True, key="class-start"):
        name = st.text_input("Class name (optional)", max_chars=MAX_CLASS_NAME, key="class-name",
                             placeholder="e.g. JAX workshop, Monday")
        registry = problems.registry()
        cols = st.columns([3, 1])
        problem = cols[0].selectbox("Problem you are teaching (optional)", list(registry), index=None,
                                    format_func=lambda slug: registry[slug].title, key="class-problem",
                                    placeholder="None: the join link opens Home",
                                    help="The join link opens this problem, already in the class.")
        cap = cols[1].number_input("Most learners", min_value=1, max_value=MAX_MAX_LEARNERS,
                                   value=DEFAULT_MAX_LEARNERS, step=10, key="class-cap",
                                   help="Joins beyond this number are refused (change it later on the board).")
        if st.button("Start a class", type="primary", key="class-start-button", icon=":material/play_arrow:"):
            _start(name, problem or "", int(cap))
    started = st.session_state.get(STARTED_KEY)
    if started:
        _started(started)
    _kept_classes(started)


def _start(name: str, problem: str = "", cap: int = DEFAULT_MAX_LEARNERS) -> None:
    try:
        info, key = class_store.call(class_store.store().start_class, name, cap, problem)
    except StoreDown as exc:
        st.error(class_store.down_message(str(exc)), icon=":material/cloud_off:")
        return
    started = {"code": info.code, "key": key, "name": info.name, "at": info.created_at.isoformat(timespec="minutes"),
               "problem": info.problem}
    st.session_state[STARTED_KEY] = started
    kept = [c for c in _kept() if c.get("code") != info.code]
    progress.save_item("teaching", ([started] + kept)[:MAX_KEPT])


def _started(c: dict) -> None:
    code, key = c["code"], c["key"]
    with st.container(border=True, key="class-started"):
        st.success(f"Class started{': ' + plain(c['name']) if c.get('name') else ''}. Show this to the room:",
                   icon=":material/groups:")
        problem = c.get("problem") or ""
        links = f'<div class="jaxplay-class-link">Join at {link_html(join_url(code, problem))}</div>'
        if problem:
            links += (f'<div class="jaxplay-class-link" style="font-size:1.1rem">or from Home: '
                      f"{link_html(join_url(code))}</div>")
        st.markdown(f'<div class="jaxplay-class-code">{html.escape(code)}</div>' + links, unsafe_allow_html=True)
        st.caption("Learners open the link (or type the code in the **Class code** field on Home) and pick a "
                   "nickname.")
        st.markdown("**Your board** (keep this link to yourself: its key opens the class's results)")
        st.markdown(f'<div class="jaxplay-class-link">{_link(board_url(code, key), "Open the class board")}</div>',
                    unsafe_allow_html=True)
        with st.expander("Copy the board link (not while this page is projected: it holds the key)"):
            st.code(board_url(code, key), language=None, wrap_lines=True)


def kept() -> list[dict]:
    """The classes started in this browser (code, key, name, at), newest first."""
    return _kept()


def remember(code: str, key: str, name: str = "") -> None:
    """Add a class to this browser's list (a board opened here by its link), if it is not there yet."""
    if not any(c["code"] == code for c in _kept()):
        progress.save_item("teaching", ([{"code": code, "key": key, "name": name, "at": ""}] + _kept())[:MAX_KEPT])


def _kept() -> list[dict]:
    kept = progress.item("teaching")
    return [c for c in kept if isinstance(c, dict) and isinstance(c.get("code"), str)
            and isinstance(c.get("key"), str)] if isinstance(kept, list) else []


def drop_from_browser(code: str) -> None:
    """Forget a class in this browser's list (after the class itself was forgotten)."""
    progress.save_item("teaching", [c for c in _kept() if c.get("code") != code])
    started = st.session_state.get(STARTED_KEY)
    if started and started.get("code") == code:
        st.session_state.pop(STARTED_KEY, None)


def _kept_classes(started: dict | None) -> None:
    others = [c for c in _kept() if not started or c["code"] != started["code"]]
    if not others:
        return
    st.subheader("Classes you started in this browser", anchor=False)
    for c in others:
        label = f"{plain(c.get('name') or 'Class')} · {c['code']}"
        when = plain(str(c.get("at", "")).replace("T", " "))
        st.markdown(f"{label} · {when} UTC · " + _link(board_url(c["code"], c["key"]), "board") + " · "
                    + _link(join_url(c["code"], str(c.get("problem") or "")), "join link"), unsafe_allow_html=True)
