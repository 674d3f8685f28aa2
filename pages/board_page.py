"""``/board?class=CODE&key=KEY``: the teacher's live board of a class, for the projector.

Without the class's key (missing or wrong) the page shows no learner data at all. The live part is a
fragment that reruns every ``REFRESH_S`` seconds on its own, so a Run shows within about that time plus a
query. Download CSV gives one row per recorded Run or Submit; Forget this class deletes every row of it.

The board says how fresh it is (``_freshness``): "live" while its reads answer and the records reach the
database; "last update 12 s ago: the database is not answering" (with the last board it read) when they do
not; how many Runs wait to be recorded when the database takes no writes; and how many records could not be
stored. While the server itself is away (a restart) the page's script says "reconnecting" and counts the
seconds (``pages/services/browser_bridge.py``). Each goes back to "live" by itself.
"""
from __future__ import annotations

import html
import time

import streamlit as st

from classroom import export, summary
from classroom.store import MAX_MAX_LEARNERS
from classroom.identity import normalize_code
from pages import nav, teacher_page
from pages.views import board_view
from pages.services import class_store, progress
from pages.services.class_store import StoreDown
from pages.views.markup import plain

REFRESH_S = 2.0
STALE_AFTER_S = 3 * REFRESH_S
"""A board whose last good read is older than this says how old it is (here and in the browser's script)."""
LAST_KEY = "board-last-read"
CODE_KEY = "board-code-for"
FORGET_KEY = "board-forget-open"
KEYS_KEY = "jaxplay_board_keys"


def render() -> None:
    progress.sync()
    st.html(f"<style>{board_view.CSS}</style>")
    code = normalize_code(st.query_params.get("class", ""))
    key, from_link = _key(code)
    if not key and not progress.loaded():  # this browser's own classes (and their keys) are on their way
        _wait_for_browser()
        return
    store = class_store.store()
    try:
        info = class_store.call(store.class_info, code) if code else None
        allowed = info is not None and class_store.call(store.check_key, code, key)
    except StoreDown as exc:
        st.title("Class board")
        st.error(class_store.down_message(str(exc)) + " This board opens by itself when it is back.",
                 icon=":material/cloud_off:")
        _retry_when_back(code)
        return
    if info is None:
        st.title("Class board")
        shown = plain(st.query_params.get("class", "")[:20])
        st.error(f"**There is no class {shown}.** It may have been forgotten by its teacher, or the link is "
                 "incomplete." if shown else "**This board's link names no class.**", icon=":material/search_off:")
        if nav.page_for("class") is not None:
            st.page_link(nav.page_for("class"), label="Start a class", icon=":material/co_present:")
        return
    if not allowed:
        st.title("Class board")
        st.error("**This board needs its key.** Open the board link you got when you started the class (it "
                 "ends in `&key=...`), or open it in the browser you started the class in; the join link shows "
                 "no results.", icon=":material/key_off:")
        return
    if from_link:  # off the address bar, which a projector shows: this session and browser keep the key
        st.session_state.setdefault(KEYS_KEY, {})[code] = key
        teacher_page.remember(code, key, info.name)
        st.query_params.pop("key", None)
    with st.container(key="board"):
        _live(info)
    _tools(info)


def _key(code: str) -> tuple[str, bool]:
    """The board's key: from the link (True), else from this session or this browser's list of classes."""
    key = st.query_params.get("key", "")
    if key:
        return key, True
    known = st.session_state.get(KEYS_KEY, {}).get(code) or next(
        (c["key"] for c in teacher_page.kept() if c["code"] == code), "")
    return known, False


def _retry_when_back(code: str) -> None:
    """Opened while the database is down: ask it again every few seconds, and draw the board once it answers."""
    @st.fragment(run_every=REFRESH_S * 2)
    def retry() -> None:
        try:
            class_store.call(class_store.store().class_info, code)
        except StoreDown:
            return
        st.rerun()
    retry()


def _wait_for_browser() -> None:
    """The key may be in this browser's list of classes: wait for its storage (up to 10 s; should it answer
    later still, its answer reruns the page and the board opens then)."""
    st.info("Opening the board… (reading this browser's list of the classes it started)",
            icon=":material/hourglass_top:")

    @st.fragment(run_every=0.5)
    def poll() -> None:
        state = st.session_state[progress.KEY]
        state["waited"] += 1
        if state["loaded"] or state["waited"] > 20:
            progress.give_up_waiting()
            st.rerun()
    poll()


def _header(info, fresh) -> None:
    """The class's name and how fresh the board is (``fresh()`` draws that line), beside the join link and
    the code in large type."""
    join = teacher_page.join_url(info.code, info.problem)
    left, right = st.columns([2, 3], vertical_alignment="center")
    with left:
        st.markdown(f"## :material/co_present: {plain(info.name) if info.name else 'Class board'}")
        fresh()
    with right:
        st.markdown(f'<div class="jaxplay-board-join">Join: {teacher_page.link_html(join)}</div>'
                    f'<div class="jaxplay-board-code">{html.escape(info.code)}</div>', unsafe_allow_html=True)


def _freshness(code: str, *, down: str = "") -> None:
    """One line on how fresh the board is: live, or since when it is not and why; then what waits to be
    recorded and what could not be stored. ``data-at`` lets the browser's script count the seconds on
    while no script run comes (a restart: "reconnecting")."""
    last = st.session_state.get(LAST_KEY, {}).get(code)
    now = time.time()
    notes, state = [], "live"
    if down:
        state = "stale"
        age = f"last update {now - last['at']:.0f} s ago" if last else "no update yet"
        notes.append(f"{age}: the database is not answering. The board goes live again by itself.")
    else:
        notes.append(f"live: updates every {REFRESH_S:g} s")
    waiting, oldest, refusing = class_store.waiting(code)
    if waiting and oldest >= STALE_AFTER_S:
        state = "stale"
        runs = f"{waiting} Run{'s' if waiting != 1 else ''}"
        notes.append(f"{runs} waiting to be recorded for {oldest:.0f} s: the database is not taking writes "
                     "(nothing is lost: they go in when it does)" if refusing else
                     f"{runs} refused by the database, tried again in a moment (the others are recorded)")
    lost = (last or {}).get("unstored", 0)
    if lost:
        notes.append(f"{lost} record{'s' if lost != 1 else ''} could not be stored (kept on the server, in "
                     f"{html.escape(class_store.aside_folder())})")
    stamp = (last or {}).get("at", now)
    st.markdown(f'<div class="jaxplay-fresh jaxplay-fresh-{state}" data-at="{stamp * 1000:.0f}" '
                f'data-stale-after="{STALE_AFTER_S * 1000:.0f}"><span class="jaxplay-fresh-code">Class '
                f'{html.escape(code)}</span> · <span class="jaxplay-fresh-text">{" · ".join(notes)}</span></div>',
                unsafe_allow_html=True)


@st.fragment(run_every=REFRESH_S)
def _live(info) -> None:
    """The board, redrawn every ``REFRESH_S``: from a fresh read, or from the last good one (and saying so)
    while the database does not answer."""
    code, store = info.code, class_store.store()
    kept = st.session_state.setdefault(LAST_KEY, {})
    try:
        learners = class_store.call(store.learners, code)
        attempts = class_store.call(store.attempts, code)
        exists = class_store.call(store.class_info, code) is not None
        unstored = class_store.call(store.unstored_count, code) if exists else 0
    except StoreDown as exc:
        _header(info, lambda: _freshness(code, down=str(exc)))
        if code not in kept:
            st.warning(class_store.down_message(str(exc)) + " The board shows the class again when it is back.",
                       icon=":material/cloud_off:")
            return
        learners, attempts, exists = kept[code]["learners"], kept[code]["attempts"], True
    else:
        kept[code] = {"at": time.time(), "learners": learners, "attempts": attempts, "unstored": unstored}
        _header(info, lambda: _freshness(code))
    if not exists:
        st.info(f"Class {code} has been forgotten: nothing of it is kept.", icon=":material/delete:")
        return
    seen = summary.problems_seen(attempts)
    if not seen:
        st.info("Waiting for the first Run: learners open the join link, pick a nickname and open a problem.",
                icon=":material/hourglass_top:")
        board_view.learners_table(summary.learner_rows(learners, attempts), _show_code,
                                  on_remove=lambda lid: _remove(code, lid))
        return
    # Unless the teacher picks one: the problem most learners have run (the latest on a tie), which does not
    # flip back and forth on the projector as Runs of two problems come in.
    ran = {slug: len({a.learner_id for a in attempts if a.problem == slug}) for slug in seen}
    last_at = {a.problem: a.id for a in attempts}
    chosen = max(seen, key=lambda slug: (ran[slug], last_at[slug]))
    if len(seen) > 1:
        picked = st.segmented_control("Problem", seen, format_func=board_view.title, key="problem",
                                      default=None, bind="query-params")
        chosen = picked or chosen
    left, right = st.columns([1.55, 2.45], gap="medium")  # figures beside learners: one screen at 1920x1080
    with left:
        board_view.problem_panel(summary.problem_board(chosen, learners, attempts,
                                                       board_view.requirement_sentences(chosen)))
    with right:
        board_view.learners_table(summary.learner_rows(learners, attempts), _show_code, show_problem=len(seen) > 1,
                                  on_remove=lambda lid: _remove(code, lid))
    _code_dialog_if_asked(code, learners, attempts)


def _remove(code: str, learner_id: int) -> None:
    try:
        class_store.call(class_store.store().remove_learner, code, learner_id)
    except StoreDown as exc:
        st.warning(class_store.down_message(str(exc)), icon=":material/cloud_off:")
        return
    st.session_state.pop("board-remove-who", None)
    st.rerun()


def _show_code(learner_id: int) -> None:
    st.session_state[CODE_KEY] = learner_id


def _code_dialog_if_asked(code: str, learners, attempts) -> None:
    learner_id = st.session_state.get(CODE_KEY)
    mine = [a for a in attempts if a.learner_id == learner_id]
    names = {learner.id: learner.nickname for learner in learners}
    if mine and learner_id in names:
        _code_dialog(code, names[learner_id], mine[-1])
    else:
        st.session_state.pop(CODE_KEY, None)


def _close_code() -> None:
    st.session_state.pop(CODE_KEY, None)


@st.dialog("Last code", width="large", on_dismiss=_close_code)
def _code_dialog(code: str, nickname: str, attempt) -> None:
    st.markdown(f"**{plain(nickname)}** · {attempt.kind.capitalize()} of "
                f"*{plain(board_view.title(attempt.problem))}* at {export.iso(attempt.at)}")
    try:
        text = class_store.call(class_store.store().code_of, code, attempt.id)
    except StoreDown as exc:
        st.warning(class_store.down_message(str(exc)))
        return
    st.code(text or "", language="python", line_numbers=True)


def _tools(info) -> None:
    code, store = info.code, class_store.store()

    def csv() -> str:
        return export.csv_text(class_store.call(store.learners, code), class_store.call(store.attempts, code))
    cols = st.columns([2, 2, 2, 4], vertical_alignment="bottom")
    cap = cols[2].number_input("Most learners", min_value=1, max_value=MAX_MAX_LEARNERS, value=info.max_learners,
                               step=10, key="board-cap", help="Joins beyond this number are refused.")
    if cap != info.max_learners:
        try:
            class_store.call(store.set_max_learners, code, int(cap))
        except StoreDown as exc:
            st.warning(class_store.down_message(str(exc)), icon=":material/cloud_off:")
    cols[0].download_button("Download CSV", data=csv, file_name=f"class-{code}.csv", mime="text/csv",
                            icon=":material/download:", on_click="ignore", key="board-csv")
    if cols[1].button("Forget this class", icon=":material/delete_forever:", key="board-forget"):
        st.session_state[FORGET_KEY] = True
    if st.session_state.get(FORGET_KEY):  # open until answered or dismissed (a full rerun keeps it open)
        _confirm_forget(code)


def _close_forget() -> None:
    st.session_state.pop(FORGET_KEY, None)


@st.dialog("Forget this class?", on_dismiss=_close_forget)
def _confirm_forget(code: str) -> None:
    st.markdown(f"Every learner, Run and Submit of class **{code}** will be deleted from the server, and its "
                "join and board links will stop working. This cannot be undone: download the CSV first if you "
                "want to keep the results.")
    cols = st.columns(2)
    if cols[0].button("Forget it", type="primary", key="board-forget-confirm", width="stretch"):
        try:
            class_store.call(class_store.store().forget, code)
        except StoreDown as exc:
            st.error(class_store.down_message(str(exc)))
            return
        teacher_page.drop_from_browser(code)
        _close_forget()
        st.rerun()
    if cols[1].button("Keep it", key="board-forget-cancel", width="stretch", on_click=_close_forget):
        st.rerun()
