"""Joining a class and being in one, on every page: ``?class=CODE`` asks for a nickname; once joined, a chip
at the top says "Class CODE · nickname" and holds the way to leave.

The class is kept in the browser like the code (``progress.item("class")``: the code, the learner's secret
token and the nickname) and in a cookie (code and token) that the first request of every page load carries,
and checked against the store once per session: the server knows a learner by the token it issued at the
join, never by the nickname the browser shows. ``slot()`` is placed at the top of the page before the page
runs; ``render(slot)`` fills it afterwards. A learner in no class finds a **Class code** field on Home and in
the chip's place on every page, which leads to the same Nickname / Join class form as ``?class=CODE``.

Nothing here waits for the browser's storage when the page's first request says enough: a page whose request
carries no class cookie is a learner in no class (the bridge sets the cookie for any browser that holds a
class), so the field is drawn in the first script run, one line high (label inside the field), and the
chip replaces it should the storage say otherwise.
"""
from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

import streamlit as st

import classroom
from classroom.identity import MAX_NICKNAME, normalize_code
from pages.services import class_store, progress
from classroom.outbox import PENDING
from pages.services.class_store import StoreDown
from pages.views.markup import plain
from pages.services.ratelimit import RunGate, RunRefused

CHECKED_KEY = "jaxplay_class_checked"
CODE_FIELD = "class-code-field"
JOINS_PER_MINUTE = int(os.environ.get("JAXPLAY_JOINS_PER_MINUTE", "60") or 60)
"""Joins one client (network address) may make per minute: a class behind one school router joins at once,
a script making 1,500 does not."""
CSS = """
/* The chip is out of the page's flow (no gap above the page), at the top right of the content, beside the
   title, where no page puts anything; it scrolls away with the page. On a phone it sits above the page. */
[data-testid='stMainBlockContainer'] { position: relative; }
[data-testid='stLayoutWrapper']:has(> .st-key-class-chip) {
  position: absolute; top: 4.4rem; right: 1rem; width: auto !important; z-index: 5; }
.st-key-class-chip { width: auto !important; max-width: min(30rem, 40vw); }
.st-key-class-chip button { border-radius: 999px; min-height: 2.1rem; padding: 0.1rem 0.9rem; }
.st-key-class-chip button p { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
/* The Class code field: one line (its label inside the field), the button beside it. */
[class*='st-key-class-code-'] button { border-radius: 999px; }
@media (max-width: 640px) {
  [data-testid='stLayoutWrapper']:has(> .st-key-class-chip) { position: static; }
  .st-key-class-chip { max-width: 100%; }
}
"""


class Places(NamedTuple):
    notices: Any
    """In the page's flow: the join form and notices."""
    chip: Any
    """Out of the flow (beside the title; above it on a phone): the chip, or the Class code field."""
    field_drawn: bool = False
    """The Class code field is in ``chip`` already (``slot`` drew it, before the page)."""


def slot(*, offer_code: bool = False) -> Places:
    """Two places at the top of the page: one in the page's flow for the join form and notices, one for the
    chip (out of the flow). An empty container draws nothing, so outside a class nothing moves. With
    ``offer_code`` (a page that offers it) and a request that says this browser is in no class, the Class
    code field is drawn here, before the page: on a phone it sits above the title, which must not move."""
    places = Places(st.container(key="class-bar"), st.container(key="class-chip"))
    if offer_code and not st.query_params.get("class") and _in_no_class():
        with places.chip:
            code_field("chip")
        return places._replace(field_drawn=True)
    return places


def _in_no_class() -> bool:
    """What the request and the session say without waiting for the browser: no class cookie, and no class in
    the browser's storage once that has been read."""
    if class_store.cookie_claim() is not None:
        return False
    if not progress.loaded():
        return True
    saved = progress.item("class")
    return not (isinstance(saved, dict) and saved.get("code"))


def render(places: tuple[Any, ...], *, join: bool = True, offer_code: bool = True) -> None:
    """Fill ``places``: verify this browser's class once per session, offer a join for ``?class=CODE`` (not
    where ``join`` is False: on the board, ``class`` names the board's class), show the chip, or the Class
    code field outside a class. The cookie answers in the first script run; without one, nothing until the
    browser's storage has been read (the page waits for it too)."""
    class_store.outbox()  # its writer starts with the server's first page: what a stopped server left goes in
    if progress.loaded():
        saved = progress.item("class")
        ok = isinstance(saved, dict) and isinstance(saved.get("code"), str) and isinstance(saved.get("token"), str)
        class_store.set_claim((saved["code"], saved["token"]) if ok else class_store.cookie_claim())
    elif class_store.cookie_claim() is None:  # no cookie: in no class (the storage may still say otherwise)
        if join and offer_code and not st.query_params.get("class"):
            if not _drawn(places):
                with places[1]:
                    code_field("chip")
            return
        if not (join and st.query_params.get("class")):
            return
    notices, chip = places[0], places[1]
    with notices:
        me = _verified()
        wanted = normalize_code(st.query_params.get("class", ""))
        if join and st.query_params.get("class") and (me is None or me.class_code != wanted):
            _join_form(wanted, me)
    if me is not None:
        with chip:
            _chip(me)
    elif join and offer_code and not st.query_params.get("class") and class_store.claimed() is None:
        if not _drawn(places):
            with chip:
                code_field("chip")


def _drawn(places: tuple[Any, ...]) -> bool:
    return bool(getattr(places, "field_drawn", False))


def code_field(where: str) -> None:
    """A **Class code** field for a learner in no class: the code off the projector, then the usual join form."""
    st.html(f"<style>{CSS}</style>")
    key = f"{CODE_FIELD}-{where}"
    # One row that never stacks, on a phone too (a horizontal container, not columns): no style sheet has to
    # arrive first for it to be one line.
    with st.container(key=f"class-code-{where}", horizontal=True, wrap=False, vertical_alignment="center",
                      gap="small"):
        st.text_input("Class code", max_chars=20, key=key, placeholder="Class code, e.g. K7QX3M",
                      label_visibility="collapsed", on_change=_go, args=(key,), width="stretch")
        st.button("Join", key=f"class-code-go-{where}", icon=":material/groups:", on_click=_go, args=(key,),
                  help="Join the class your teacher shows (its code: six letters and digits)", width="content")
    if st.session_state.pop(f"{key}-bad", False):
        st.error("A class code is six letters and digits, as your teacher shows it.", icon=":material/search_off:")


def _go(key: str) -> None:
    """The typed code becomes ``?class=CODE``: the join form then opens as it does for the join link."""
    code = normalize_code(st.session_state.get(key, ""))
    if not code:
        st.session_state[f"{key}-bad"] = bool(str(st.session_state.get(key, "")).strip())
        return
    st.session_state[key] = ""
    st.query_params["class"] = code


def _verified() -> classroom.Member | None:
    """The member this browser's class (cookie or storage) names, checked with the store once per session.
    While the store cannot answer, Runs are still recorded by the token (``class_store.member``)."""
    claim = class_store.claimed()
    if claim is None:
        class_store.set_member(None)
        return None
    code, token = claim
    if st.session_state.get(CHECKED_KEY) == claim:
        me = st.session_state.get(class_store.MEMBER_KEY)
    else:
        try:
            me = class_store.call(class_store.store().member, code, token)
        except StoreDown as exc:
            st.warning(f"You are in class **{plain(code)}**. " + class_store.down_message(str(exc)),
                       icon=":material/cloud_off:")
            class_store.set_member(None)
            return None
        st.session_state[CHECKED_KEY] = claim
        class_store.set_member(me)
    if me is None:
        _gone(code)
    return me


def _gone(code: str) -> None:
    """The saved class is no more (forgotten by its teacher): say so, and let the learner clear it."""
    with st.container(border=True, key="class-gone"):
        st.warning(f"Class **{plain(code)}** no longer knows this browser: its teacher has most likely forgotten "
                   "the class, so your Runs are no longer recorded for it.", icon=":material/group_off:")
        if st.button("OK, forget it here", key="class-gone-ok"):
            _leave()


def _join_form(code: str, me: classroom.Member | None) -> None:
    with st.container(border=True, key="class-join"):
        try:
            info = class_store.call(class_store.store().class_info, code) if code else None
        except StoreDown as exc:
            st.warning(class_store.down_message(str(exc)), icon=":material/cloud_off:")
            return
        shown = plain(code or st.query_params.get("class", "")[:20])
        if info is None:
            st.error(f"**There is no class {shown}.** Check the code with your teacher: it may be mistyped, "
                     "or the class may have been forgotten.", icon=":material/search_off:")
            if st.button("Dismiss", key="class-join-dismiss"):
                st.query_params.pop("class", None)
                st.rerun()
            return
        title = f"Join class {plain(info.code)}" + (f" · {plain(info.name)}" if info.name else "")
        st.markdown(f"#### :material/groups: {title}")
        st.caption("Your teacher sees your nickname, and what your Runs and Submits get, on the class board. "
                   "Your code stays in this browser as before.")
        if me is not None:
            st.caption(f"You are in class {plain(me.class_code)} as {plain(me.nickname)}: joining this one "
                       "leaves it.")
        cols = st.columns([3, 1], vertical_alignment="bottom")
        nickname = cols[0].text_input("Nickname", max_chars=MAX_NICKNAME, key="class-join-nickname",
                                      placeholder="How your teacher will see you")
        if cols[1].button("Join class", type="primary", key="class-join-button", width="stretch"):
            _join(info.code, nickname)


@st.cache_resource(show_spinner=False)
def _join_gate() -> RunGate:
    """One per server: joins per client per minute (``JAXPLAY_JOINS_PER_MINUTE``)."""
    return RunGate(max_runs=JOINS_PER_MINUTE, window_s=60.0)


def _join(code: str, nickname: str) -> None:
    from pages.services.runs import _client  # the client's address as the run limits see it
    try:
        gate, ticket = _join_gate(), f"join-{time.monotonic_ns()}"
        gate.start(ticket, _client())
        gate.finish(ticket)
    except RunRefused as exc:
        st.error(f"Too many joins from your network just now. Please try again in {exc.retry_after_s:.0f} s.",
                 icon=":material/schedule:")
        return
    try:
        me, token = class_store.call(class_store.store().join, code, nickname)
    except classroom.ClassFull as exc:
        st.error(f"Class {plain(code)} is full: it takes {exc} learners. Ask your teacher to raise the limit on "
                 "the class page.", icon=":material/group_off:")
        return
    except classroom.BadNickname as exc:
        st.error(str(exc), icon=":material/edit:")
        return
    except classroom.NicknameTaken as exc:
        st.error(f"Someone in class {plain(code)} is already called **{plain(exc)}**. Choose another nickname "
                 "(add an initial, say).", icon=":material/person_search:")
        return
    except classroom.UnknownClass:
        st.error(f"There is no class {plain(code)} any more: its teacher has forgotten it.", icon=":material/search_off:")
        return
    except StoreDown as exc:
        st.warning(class_store.down_message(str(exc)), icon=":material/cloud_off:")
        return
    progress.save_item("class", {"code": me.class_code, "token": token, "nickname": me.nickname})
    st.session_state[CHECKED_KEY] = (me.class_code, token)
    class_store.set_claim((me.class_code, token))
    class_store.set_member(me)
    st.query_params.pop("class", None)
    st.toast(f"You joined class {plain(me.class_code)} as {plain(me.nickname)}.", icon=":material/groups:")
    st.rerun()


def _chip(me: classroom.Member) -> None:
    st.html(f"<style>{CSS}</style>")
    with st.popover(f"Class {plain(me.class_code)} · {plain(me.nickname)}", icon=":material/groups:"):
        st.markdown(f"You are in class **{plain(me.class_code)}** as **{plain(me.nickname)}**.")
        st.caption("Every Run and Submit you make is graded as usual and recorded for your teacher's board. "
                   "Your code stays in this browser.")
        if st.button("Leave class", key="class-leave", icon=":material/logout:"):
            _leave()


def _leave() -> None:
    """Forget the class in this browser (what was recorded stays on the teacher's board)."""
    progress.save_item("class", None)
    st.session_state.pop(CHECKED_KEY, None)
    class_store.set_claim(None)
    class_store.set_member(None)
    st.rerun()


NOTE_POLL_S = 1.0


def note(task: Any) -> None:
    """Under a verdict: say when its result is not on the class board yet ("recorded later") or never will be.
    "Recorded later" is asked again every ``NOTE_POLL_S`` (a fragment of its own) and goes once the record
    is in: nothing else would redraw the page for it."""
    result = getattr(task, "class_note", None)
    if result is None or result.recorded:
        return
    if result.state != PENDING:
        st.warning(result.message, icon=":material/cloud_off:")
        return

    @st.fragment(run_every=NOTE_POLL_S)
    def later() -> None:
        if not result.recorded:
            with st.container(key="class-note-later"):
                st.warning(result.message, icon=":material/cloud_off:")
    later()
