"""The class pages headless (Streamlit AppTest): a teacher starts a class, a learner joins with a nickname and
is shown in the class on every page, a Run is recorded by the server from the grading, the board opens only
with its key, the CSV and forgetting work, and a database that cannot be reached is said, not hidden."""
from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

import problems
from class_db import empty_pg
from classroom import ClassStore
from classroom.db import dispose_all

GA = "gradient-accumulation-with-scan"
UNREACHABLE = "postgresql+psycopg://nobody:pw@127.0.0.1:9/none"  # port 9 (discard): refused at once


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path, monkeypatch) -> ClassStore:
    url = f"sqlite:///{tmp_path / 'classroom.sqlite3'}" if request.param == "sqlite" else empty_pg()
    monkeypatch.setenv("JAXPLAY_DB", url)
    monkeypatch.setenv("JAXPLAY_DATA", str(tmp_path / "data"))
    from pages.services import class_store
    class_store._health.down_until = 0.0
    yield ClassStore(url).ready()  # (the app's cached store may have migrated an earlier test's tables)
    dispose_all()


def _script(page: str) -> None:
    from pages import board_page, problem, teacher_page
    from pages.views import class_bar
    from pages.services import progress
    bar = class_bar.slot()
    if page.startswith("problem:"):
        problem.render(page.split(":", 1)[1])
    else:  # "any": a page of no concern to the class, as the home page is (which needs the app's navigation)
        {"any": progress.sync, "class": teacher_page.render, "board": board_page.render}[page]()
    class_bar.render(bar, join=page != "board")
    progress.flush()


def _app(page: str, params: dict | None = None, saved_class: dict | None = None, items: dict | None = None,
         verdicts: dict | None = None) -> AppTest:
    at = AppTest.from_function(_script, args=(page,), default_timeout=60)
    at.session_state["jaxplay_progress"] = {"loaded": True, "code": {}, "solved": set(), "pending": {}, "waited": 0,
                                            "items": {"class": saved_class, **(items or {})},
                                            "verdicts": dict(verdicts or {})}
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [s.value for s in at.success] + [w.value for w in at.warning] + [i.value for i in at.info]
    parts += [c.value for c in at.code]
    return "\n".join(str(p) for p in parts)


def _saved_class(at: AppTest) -> dict | None:
    return at.session_state["jaxplay_progress"]["items"].get("class")


def test_a_teacher_starts_a_class_and_gets_the_join_and_board_links(db):
    at = _app("class").run()
    at.text_input(key="class-name").input("Monday JAX").run()
    at.button(key="class-start-button").click().run()
    assert not at.exception
    started = at.session_state["jaxplay_class_started"]
    code, key = started["code"], started["key"]
    html = _text(at)
    assert f'href="/?class={code}"' in html, "the join link is an <a> whose address holds ?class=CODE"
    assert f'href="/board?class={code}&amp;key={key}"' in html, "the board link carries the key"
    assert db.check_key(code, key) and db.class_info(code).name == "Monday JAX"
    kept = at.session_state["jaxplay_progress"]["items"]["teaching"]
    assert kept[0]["code"] == code and kept[0]["key"] == key, "the browser keeps its classes"


def _join(db: ClassStore, code: str, nickname: str) -> AppTest:
    at = _app("any", {"class": code}).run()
    at.text_input(key="class-join-nickname").input(nickname).run()
    at.button(key="class-join-button").click().run()
    return at


def test_a_learner_joins_with_a_nickname_and_sees_the_class_on_every_page(db):
    info, _ = db.start_class("Monday")
    at = _app("any", {"class": info.code.lower()}).run()
    assert at.text_input(key="class-join-nickname").label == "Nickname"
    assert at.button(key="class-join-button").label == "Join class"
    at.text_input(key="class-join-nickname").input("  Ana  ").run()
    at.button(key="class-join-button").click().run()
    assert not at.exception
    saved = _saved_class(at)
    member = db.member(info.code, saved["token"])
    assert member is not None and member.nickname == "Ana" == saved["nickname"]
    assert "class" not in at.query_params, "the join link's parameter goes once joined"
    assert f"You are in class **{info.code}** as **Ana**." in _text(at)
    assert at.button(key="class-leave").label == "Leave class"

    again = _app(f"problem:{GA}", saved_class=saved).run()  # a new session (a reload, another page)
    assert f"You are in class **{info.code}** as **Ana**." in _text(again)
    again.button(key="class-leave").click().run()
    assert _saved_class(again) is None and "You are in class" not in _text(again)


def test_duplicate_blank_and_unknown_codes_are_told(db):
    info, _ = db.start_class()
    assert _saved_class(_join(db, info.code, "ana")) is not None
    twin = _join(db, info.code, "ANA")
    assert "already called" in _text(twin) and _saved_class(twin) is None
    blank = _join(db, info.code, "   ")
    assert "Type a nickname" in _text(blank)
    unknown = _app("any", {"class": "ZZZZZZ"}).run()
    assert "There is no class ZZZZZZ" in _text(unknown) and not unknown.text_input
    hostile = _app("any", {"class": "<img src=x>"}).run()
    assert r"There is no class \<img src\=x\>" in _text(hostile) and not hostile.exception
    db.forget(info.code)
    assert "There is no class" in _text(_app("any", {"class": info.code}).run())


def test_a_forgotten_class_is_said_to_its_learners(db):
    info, _ = db.start_class()
    saved = _saved_class(_join(db, info.code, "ana"))
    db.forget(info.code)
    at = _app("any", saved_class=saved).run()
    assert "no longer knows this browser" in _text(at)
    at.button(key="class-gone-ok").click().run()
    assert _saved_class(at) is None


def test_nicknames_are_shown_as_text(db):
    info, _ = db.start_class()
    hostile = "<img src=x onerror=alert(1)>**b**[l](j)"
    at = _join(db, info.code, hostile)
    text = _text(at)
    assert hostile not in text, "never handed to Markdown as it is"
    assert r"\<img src\=x onerror\=alert\(1\)\>\*\*b\*\*\[l\]\(j\)" in text


def _run(at: AppTest, timeout: float = 180.0) -> AppTest:
    at.button(key="run_btn").click().run()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        if not any(w in i.value for i in at.info for w in ("Running", "Waiting for a free")):
            return at
        time.sleep(0.5)
    raise AssertionError("the grading did not finish in time")


@pytest.fixture
def editor_code(monkeypatch):
    import streamlit as st

    import pages.problem as page
    monkeypatch.setattr(page, "editor", lambda code, key, annotations=None: st.session_state.get("code", code))


def test_a_run_is_recorded_by_the_server_from_the_grading(db, editor_code):
    info, _ = db.start_class()
    saved = _saved_class(_join(db, info.code, "ana"))
    at = _app(f"problem:{GA}", saved_class=saved)
    at.session_state["code"] = _python_loop()
    at.run()
    _run(at)
    assert not at.exception
    [row] = db.attempts(info.code)
    assert (row.problem, row.kind, row.verdict) == (GA, "run", "requirements_not_met")
    assert "one-scan" in row.failed and row.failure.startswith("one-scan not met: ")
    assert db.code_of(info.code, row.id) == _python_loop()
    assert "not recorded" not in _text(at)


def _python_loop() -> str:
    from pathlib import Path
    return (Path(__file__).resolve().parents[1] / "problems" / GA / "submissions" / "requirements_not_met"
            / "python_loop.py").read_text()


def test_an_unreachable_database_is_a_banner_and_grading_goes_on(db, editor_code, monkeypatch):
    info, _ = db.start_class()
    saved = _saved_class(_join(db, info.code, "ana"))
    monkeypatch.setenv("JAXPLAY_DB", UNREACHABLE)
    at = _app(f"problem:{GA}", saved_class=saved).run()
    assert "cannot be reached" in _text(at) and "recorded on the class board when it is back" in _text(at)
    assert "pw" not in _text(at), "the URL's password is never shown"
    teacher = _app("class").run()
    teacher.button(key="class-start-button").click().run()
    assert "cannot be reached" in _text(teacher) and not teacher.exception
    board = _app("board", {"class": info.code, "key": "k"}).run()
    assert "cannot be reached" in _text(board) and not board.exception


def test_a_result_the_database_cannot_take_is_recorded_later_exactly_once(db, editor_code, monkeypatch, tmp_path):
    info, _ = db.start_class()
    saved = _saved_class(_join(db, info.code, "ana"))
    at = _app(f"problem:{GA}", saved_class=saved)
    at.session_state["code"] = _python_loop()
    at.run()
    monkeypatch.setenv("JAXPLAY_DB", UNREACHABLE)  # the database goes away after the page loaded
    _run(at)
    assert "Requirements Not Met" in _text(at), "the grading itself is unaffected"
    assert "Recorded later" in _text(at)
    assert db.attempts(info.code) == []
    outbox = tmp_path / "data" / "outbox"
    [kept] = list(outbox.glob("*.json"))
    assert oct(outbox.stat().st_mode & 0o777) == "0o700" and oct(kept.stat().st_mode & 0o777) == "0o600"
    assert oct(outbox.parent.stat().st_mode & 0o777) == "0o700", "the data folder is private too"
    assert saved["token"] not in kept.read_text(), "the outbox keeps the token's digest, not the token"
    monkeypatch.setenv("JAXPLAY_DB", db.url)  # back: the outbox's writer puts it in, once
    deadline = time.monotonic() + 15
    while not db.attempts(info.code) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(2)
    [row] = db.attempts(info.code)
    assert (row.kind, row.verdict) == ("run", "requirements_not_met")
    assert not list(outbox.glob("*.json"))
    at.run()
    assert "Recorded later" not in _text(at)


def test_the_board_opens_only_with_its_key_and_shows_the_class(db):
    info, key = db.start_class("Monday")
    ana, _ = db.join(info.code, "Annabel")
    from classroom import Outcome
    db.record(ana, Outcome(GA, "submit", "accepted", ("one-scan",), (), "", "x = 1", 1.0))
    for params in ({"class": info.code}, {"class": info.code, "key": "wrong"}, {"class": info.code, "key": ""}):
        at = _app("board", params).run()
        assert "needs its key" in _text(at)
        assert "Annabel" not in _text(at) and not at.button and not at.get("download_button")
    at = _app("board", {"class": info.code, "key": key}).run()
    assert not at.exception
    text = _text(at)
    assert "Annabel" in text and problems.get(GA).title in [s.value for s in at.subheader]
    assert [m.label for m in at.metric][:3] == ["Joined", "Ran it", "Solved (Submit accepted)"]
    assert [m.value for m in at.metric][:3] == ["1", "1", "1"]
    assert at.get("download_button")[0].proto.label == "Download CSV"
    assert "There is no class" in _text(_app("board", {"class": "ZZZZZZ", "key": key}).run())


def test_the_key_leaves_the_address_bar_and_this_browser_keeps_it(db):
    info, key = db.start_class("Monday")
    db.join(info.code, "Annabel")
    at = _app("board", {"class": info.code, "key": key}).run()
    assert "key" not in at.query_params, "a projected address bar does not show the key"
    kept = at.session_state["jaxplay_progress"]["items"]["teaching"]
    assert kept[0]["code"] == info.code and kept[0]["key"] == key
    at.run()  # the session keeps it
    assert "Annabel" in _text(at)
    again = _app("board", {"class": info.code})  # a reload: a new session, the browser's list
    again.session_state["jaxplay_progress"]["items"]["teaching"] = kept
    assert "Annabel" in _text(again.run())
    stranger = _app("board", {"class": info.code}).run()  # another browser, no key
    assert "needs its key" in _text(stranger) and "Annabel" not in _text(stranger)


def test_forget_this_class_deletes_it(db):
    info, key = db.start_class()
    ana, _ = db.join(info.code, "ana")
    at = _app("board", {"class": info.code, "key": key}).run()
    at.button(key="board-forget").click().run()
    at.button(key="board-forget-confirm").click().run()
    assert db.class_info(info.code) is None and db.counts(info.code) == (0, 0)
    assert "There is no class" in _text(at.run())


def test_a_class_on_two_problems_picks_one_and_shows_the_latest_first(db):
    from classroom import Outcome
    info, key = db.start_class()
    ana, _ = db.join(info.code, "ana")
    db.record(ana, Outcome(GA, "run", "requirements_not_met", (), ("one-scan",), "`one-scan` not met: x", "", 1.0))
    db.record(ana, Outcome("rematerialized-mlp-block", "run", "accepted", ("tanh-in-checkpoint",), (), "", "", 1.0))
    at = _app("board", {"class": info.code, "key": key}).run()
    assert not at.exception
    remat, ga = problems.get("rematerialized-mlp-block").title, problems.get(GA).title
    assert [s.value for s in at.subheader][0] == remat, "the problem of the latest Run first"
    at.get("button_group")[0].set_value(GA).run()
    at.run()  # a refresh of the board keeps the choice
    assert [s.value for s in at.subheader][0] == ga
    assert "<b>one-scan</b> not met: " in _text(at) and "`one-scan`" not in _text(at), "plain text, no Markdown"


# Joining with the code, the cap, the board naming who needs help, removing a learner, an outage


def test_a_learner_in_no_class_types_the_code_and_gets_the_join_form(db):
    info, _ = db.start_class("Monday")
    at = _app("any").run()
    field = at.text_input(key="class-code-field-chip")
    assert field.label == "Class code"
    field.input(info.code.lower()[:3] + "-" + info.code.lower()[3:]).run()  # as read off a projector
    assert at.query_params["class"] == [info.code] or at.query_params["class"] == info.code
    at.run()
    assert at.text_input(key="class-join-nickname").label == "Nickname"
    assert at.button(key="class-join-button").label == "Join class"
    bad = _app("any").run()
    bad.text_input(key="class-code-field-chip").input("??").run()
    assert "six letters and digits" in _text(bad) and "class" not in bad.query_params
    joined = _join(db, info.code, "ana")
    assert not joined.get("text_input") or all(t.key != "class-code-field-chip" for t in joined.text_input), \
        "a learner in a class has the chip instead"


def test_the_join_link_opens_the_problem_being_taught(db):
    at = _app("class").run()
    at.selectbox(key="class-problem").set_value(GA).run()
    at.number_input(key="class-cap").set_value(3).run()
    at.button(key="class-start-button").click().run()
    assert "jaxplay_class_started" in at.session_state, _text(at)
    started = at.session_state["jaxplay_class_started"]
    assert f'href="/{GA}?class={started["code"]}"' in _text(at) and f'href="/?class={started["code"]}"' in _text(at)
    info = db.class_info(started["code"])
    assert (info.problem, info.max_learners) == (GA, 3)


def test_a_full_class_says_so(db):
    info, _ = db.start_class(max_learners=1)
    _join(db, info.code, "ana")
    full = _join(db, info.code, "bo")
    assert "is full" in _text(full) and _saved_class(full) is None


def test_the_board_names_who_fails_each_requirement_and_who_could_not_run(db):
    from classroom import Outcome
    info, key = db.start_class()
    people = {n: db.join(info.code, n)[0] for n in ("ana", "bo", "cy", "<i>dee</i>")}
    db.record(people["ana"], Outcome(GA, "run", "requirements_not_met", ("grad-inside-scan",), ("one-scan",),
                                     "`one-scan` not met: x", "", 1.0))
    db.record(people["bo"], Outcome(GA, "run", "requirements_not_met", ("grad-inside-scan",), ("one-scan",),
                                    "`one-scan` not met: x", "", 1.0))
    db.record(people["cy"], Outcome(GA, "run", "syntax_error", (), (), "Syntax Error: x", "", 1.0))
    db.record(people["<i>dee</i>"], Outcome(GA, "submit", "accepted", ("grad-inside-scan", "one-scan"), (), "", "", 1.0))
    at = _app("board", {"class": info.code, "key": key}).run()
    assert not at.exception
    text = _text(at)
    assert 'data-requirement="one-scan"' in text and "✗ ana, bo" in text, "who fails one-scan, by name"
    assert "Could not run (1): cy" in text
    assert "&lt;i&gt;dee&lt;/i&gt;" in text and "<i>dee</i>" not in text, "a nickname is text"
    assert ">Not met<" in text and ">Syntax Error<" in text and ">Accepted<" in text, "large badges"
    assert "accepted on their very first attempt (a Submit)" in text

    at.selectbox(key="board-remove-who").set_value(people["bo"].learner_id).run()
    at.button(key="board-remove").click().run()
    assert [learner.nickname for learner in db.learners(info.code)] == ["ana", "cy", "<i>dee</i>"]
    assert "✗ ana" in _text(at.run()) and "✗ ana, bo" not in _text(at)


def test_a_board_opened_during_an_outage_opens_once_the_database_is_back(db, monkeypatch):
    from pages.services import class_store
    info, key = db.start_class()
    db.join(info.code, "ana")
    monkeypatch.setenv("JAXPLAY_DB", UNREACHABLE)
    at = _app("board", {"class": info.code, "key": key}).run()
    assert "opens by itself when it is back" in _text(at) and not at.exception
    monkeypatch.setenv("JAXPLAY_DB", db.url)
    class_store._health.down_until = 0.0
    at.run()
    assert "ana" in _text(at) and "cannot be reached" not in _text(at)


def test_a_session_records_for_the_class_its_cookie_names_before_the_store_answers(db):
    from classroom.identity import digest
    from pages.services import class_store
    info, _ = db.start_class()
    _, token = db.join(info.code, "ana")
    raw = '%7B%22code%22%3A%22' + info.code + '%22%2C%22token%22%3A%22' + token + '%22%7D'
    assert class_store.parse_claim(raw) == (info.code, token)
    for bad in ("", "x", "%7B%7D", '{"code": "ab", "token": "t"}', "[1]", "a" * 2000):
        assert class_store.parse_claim(bad) is None
    assert digest(token) == db.member(info.code, token).token_hash


def test_a_click_from_another_server_session_is_not_run_again():
    from streamlit.testing.v1 import AppTest

    def script() -> None:
        import streamlit as st
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        from pages.services.browser_bridge import new_click
        me = get_script_run_ctx().session_id
        old = {"slug": "p", "code": "x", "seq": 1, "button": "run_btn", "session": "a-session-before-the-restart"}
        mine = {"slug": "p", "code": "y", "seq": 2, "button": "run_btn", "session": me}
        st.write(repr((new_click("p", old, ("run_btn",)), new_click("p", mine, ("run_btn",)))))
    at = AppTest.from_function(script).run()
    assert at.markdown[0].value == repr((None, ("run_btn", "y")))


def test_a_click_whose_script_run_was_stopped_before_its_grading_started_still_grades():
    """The lost first Run/Submit on a fresh server: the click's script run can be stopped at any Streamlit
    call by a rerun already waiting (a fresh page's own reruns are still arriving), and the next run sees no
    button press. Before the fix the bridge's click was marked used when handed out, so it was lost: no
    grading, no status. Now it is handed out again until a grading has started since, and once only."""
    def script() -> None:
        import streamlit as st
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

        from pages.services import runs
        from pages.services.browser_bridge import new_click
        me = get_script_run_ctx().session_id
        click = new_click("p", {"slug": "p", "code": "x", "seq": 7, "button": "run_btn", "session": me}, ("run_btn",))
        runs_so_far = st.session_state.setdefault("runs", [])
        runs_so_far.append(click is not None)
        if click is not None and len(runs_so_far) == 1:
            get_script_run_ctx().script_requests.request_rerun(RerunData())  # waiting before the grading starts
        if click is not None:
            runs.start("p", "run", click[1], lambda task: "graded")  # stopped inside, in the first run

    at = AppTest.from_function(script, default_timeout=60).run()
    tasks = at.session_state["jaxplay_tasks"]
    assert tasks["current"] is not None or tasks["last"], "the click started its grading"
    at.run()
    assert at.session_state["runs"][-1] is False, "and only once"


def test_the_browser_is_told_which_clicks_started_a_grading_and_only_those():
    """After a server restart the bridge hands the new session its last click unless the old session told it
    that click's grading started (``started_clicks``, written with every script run's storage changes): a
    click that started is never run twice, one that was handed out but never started is not lost."""
    from streamlit.testing.v1 import AppTest

    def script() -> None:
        import streamlit as st
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        from pages.services import runs
        from pages.services.browser_bridge import new_click, started_clicks
        me = get_script_run_ctx().session_id
        handed = new_click("p", {"slug": "p", "code": "x", "seq": 11, "button": "run_btn", "session": me},
                           ("run_btn",))
        before = started_clicks()
        if handed is not None:
            runs.start("p", "run", handed[1], lambda task: "graded")
        st.write(repr((handed is not None, before, started_clicks())))

    at = AppTest.from_function(script, default_timeout=60).run()
    assert at.markdown[0].value == repr((True, [], [11]))


def test_a_click_on_custom_input_or_measure_cost_is_handed_out_once_its_task_started():
    """The bridge re-offers a click until a task has started for it: a custom input's run or a cost measurement
    counts as started (they are not Run/Submit gradings), so a quick one is not run again on every rerun."""
    from streamlit.testing.v1 import AppTest

    def script() -> None:
        import streamlit as st
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        from pages.services import runs
        from pages.services.browser_bridge import new_click
        me = get_script_run_ctx().session_id
        seen = st.session_state.setdefault("seen", [])
        for kind, slug, seq in (("custom", "p", 21), ("cost", "q", 22)):  # (one click at a time per problem)
            key = f"{kind}-run-{slug}"
            click = new_click(slug, {"slug": slug, "code": "x", "seq": seq, "button": key, "session": me}, (key,))
            seen.append((kind, click is not None))
            if click is not None:
                task = runs.start(slug, kind, click[1], lambda task: "done")
                if task is not None:
                    task.future.result()

    at = AppTest.from_function(script, default_timeout=60).run()
    at.run()
    assert at.session_state["seen"] == [("custom", True), ("cost", True), ("custom", False), ("cost", False)]


# Issue 42: a Run the database refuses blocks nobody; the learner sees what the board recorded; the board
# says how fresh it is


@pytest.mark.slow
def test_a_run_whose_error_holds_a_nul_or_a_lone_surrogate_blocks_no_record(db, editor_code):
    """PostgreSQL refuses a NUL and SQLite a lone surrogate: such a Run's error message stopped the outbox, and
    every later record of every learner stayed "Recorded later", also after a restart."""
    from classroom import Outcome
    from pages.services import class_store
    info, _ = db.start_class()
    saved = _saved_class(_join(db, info.code, "ana"))
    at = _app(f"problem:{GA}", saved_class=saved)
    for raised in ('"nul:\\x00 end"', '"lone:\\ud800 end"'):
        at.session_state["code"] = f"def grad_accumulation(params, x, y, num_microbatches):\n    raise ValueError({raised})\n"
        at.run()
        _run(at)
        assert "Runtime Error" in _text(at) and "Recorded later" not in _text(at), _text(at)
    others = [db.join(info.code, f"learner {i}")[0] for i in range(10)]
    box = class_store.outbox()
    uids = [box.put(m, Outcome(GA, "run", "accepted", (), (), "", "# ok", 0.5)) for m in others]
    assert all(box.wait(u, 15) == "recorded" for u in uids)
    rows = db.attempts(info.code)
    assert len(rows) == 12 and not list((class_store.classroom.data_dir() / "outbox").glob("*.json"))
    failures = sorted(r.failure for r in rows if r.verdict == "runtime_error")
    assert "\ufffd" in failures[0] and "\ufffd" in failures[1], failures


def _report_json(verdict: str, message: str = "") -> str:
    import json

    from grader.records import Report, Verdict
    report = Report(file="<editor>", problem=GA, verdict=Verdict(verdict), message=message, elapsed_s=1.0)
    return json.dumps({"kind": "run", "code": "old code", "report": report.to_json(marks=True), "uid": "old-run"})


def test_a_run_graded_while_the_page_was_away_shows_what_the_board_recorded(db, editor_code):
    """The issue: a Run in flight when the server stopped was graded and recorded as Accepted, while the
    learner's page reconnected showing the previous verdict and nothing about that Run."""
    from classroom import Outcome
    info, key = db.start_class()
    saved = _saved_class(_join(db, info.code, "ana"))
    ana = db.member(info.code, saved["token"])
    db.record(ana, Outcome(GA, "run", "accepted", ("one-scan",), (), "", "the new code", 1.0), uid="run-in-flight")
    inflight = {GA: {"uid": "run-in-flight", "kind": "run", "at": 0}}
    at = _app(f"problem:{GA}", saved_class=saved, items={"inflight": inflight},
              verdicts={GA: _report_json("wrong_answer", "the previous verdict")}).run()
    assert not at.exception
    text = _text(at)
    assert "**Accepted** · your Run" in text and "This is what your class board recorded" in text
    assert "the previous verdict" not in text, "never the stale verdict in silence"
    board = _app("board", {"class": info.code, "key": key}).run()
    assert ">Accepted<" in _text(board), "the board says the same"


def test_a_run_that_was_never_graded_says_it_was_interrupted(db, editor_code):
    info, _ = db.start_class()
    saved = _saved_class(_join(db, info.code, "ana"))
    inflight = {GA: {"uid": "never-graded", "kind": "run", "at": 0}}
    for who in (saved, None):  # in a class (the board has no row of it) and in none
        at = _app(f"problem:{GA}", saved_class=who, items={"inflight": inflight},
                  verdicts={GA: _report_json("wrong_answer", "the previous verdict")}).run()
        text = _text(at)
        assert "Your Run was interrupted: run it again." in text and "the previous verdict" not in text
    assert db.attempts(info.code) == []
    seen = _app(f"problem:{GA}", saved_class=saved, items={"inflight": {GA: {**inflight[GA], "uid": "old-run"}}},
                verdicts={GA: _report_json("wrong_answer", "the previous verdict")}).run()
    assert "the previous verdict" in _text(seen) and "interrupted" not in _text(seen), \
        "a Run whose verdict the browser has is no interrupted Run"


@pytest.mark.slow
def test_a_locked_database_the_board_says_so_then_recovers_by_itself(db, monkeypatch):
    """PostgreSQL: a lock that blocks reads and writes (the board reads nothing: it keeps the last board and
    says how old it is). SQLite: the write lock held elsewhere (the board reads, but the Runs wait: it says
    they wait). Both go live again by themselves, the waiting Run on the board."""
    import sqlite3

    from sqlalchemy import create_engine, text

    from classroom import Outcome
    from classroom import db as class_db
    from pages import board_page
    from pages.services import class_store
    monkeypatch.setattr(class_store, "CALL_TIMEOUT_S", 2.0)
    monkeypatch.setattr(class_store, "RETRY_AFTER_S", 1.0)
    monkeypatch.setattr(class_db, "BUSY_TIMEOUT_S", 1.0)
    monkeypatch.setattr(board_page, "STALE_AFTER_S", 2.0)
    dispose_all()  # (engines made again with the short busy timeout)
    info, key = db.start_class()
    ana, _ = db.join(info.code, "ana")
    db.record(ana, Outcome(GA, "run", "wrong_answer", (), (), "Wrong Answer: x", "", 1.0))
    at = _app("board", {"class": info.code, "key": key}).run()
    assert "live: updates every 2 s" in _text(at)
    if db.url.startswith("sqlite"):
        holder = sqlite3.connect(db.url.removeprefix("sqlite:///"), isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        release = lambda: (holder.execute("ROLLBACK"), holder.close())  # noqa: E731
    else:
        other = create_engine(db.url)
        conn = other.connect()
        conn.execute(text("BEGIN"))
        conn.execute(text("LOCK TABLE jaxplay_attempts IN ACCESS EXCLUSIVE MODE"))
        release = lambda: (conn.execute(text("ROLLBACK")), conn.close(), other.dispose())  # noqa: E731
    try:
        class_store.outbox().put(ana, Outcome(GA, "submit", "accepted", (), (), "", "", 1.0))
        said = "not taking writes" if db.url.startswith("sqlite") else "the database is not answering"
        deadline = time.monotonic() + 20
        while True:
            time.sleep(0.5)
            text_now = _text(at.run())
            if said in text_now or time.monotonic() > deadline:
                break
        if db.url.startswith("sqlite"):
            assert "1 Run waiting to be recorded" in text_now and "not taking writes" in text_now, text_now
        else:
            assert "the database is not answering" in text_now and "last update" in text_now, text_now
        assert "ana" in text_now and ">Wrong answer<" in text_now, "the last board stays up"
    finally:
        release()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(1.2)
        text_now = _text(at.run())
        if "live: updates every 2 s" in text_now and "waiting" not in text_now and ">Accepted<" in text_now:
            break
    assert "live: updates every 2 s" in text_now and ">Accepted<" in text_now, text_now


def test_the_class_code_field_is_drawn_in_the_first_script_run_for_a_browser_in_no_class(db):
    """Issue 42: the field waited for the browser's storage (5 to 7 s on a busy server) and shifted the page.
    A first request without the class cookie is a browser in no class: the field is there at once."""
    at = AppTest.from_function(_script, args=("any",), default_timeout=60)
    at.session_state["jaxplay_progress"] = {"loaded": False, "code": {}, "solved": set(), "pending": {}, "waited": 0}
    at.run()
    field = at.text_input(key="class-code-field-chip")
    assert field.label == "Class code" and field.proto.label_visibility.value == 2, "one line: the label inside"
    assert field.placeholder.startswith("Class code")


def test_the_board_counts_the_records_that_could_not_be_stored(db):
    import datetime as dt
    info, key = db.start_class()
    db.join(info.code, "ana")
    at = _app("board", {"class": info.code, "key": key}).run()
    assert "could not be stored" not in _text(at)
    db.note_unstored(info.code, "refused-1", dt.datetime(2026, 3, 2, 9, 0), "DataError: refused")
    assert "1 record could not be stored (kept on the server" in _text(at.run())
    db.note_unstored(info.code, "refused-2", dt.datetime(2026, 3, 2, 9, 1), "DataError: refused")
    assert "2 records could not be stored" in _text(at.run())
