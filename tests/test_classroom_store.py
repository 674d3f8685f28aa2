"""The class store on SQLite and PostgreSQL: classes, joins, records, forgetting, migrations, and many
writers at once (threads and processes) losing no row."""
from __future__ import annotations

import multiprocessing
import sys
import types
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import Connection, inspect, text

from class_db import db_url, write_many  # noqa: F401 - db_url is a fixture
from classroom import BadNickname, ClassStore, Member, NicknameTaken, Outcome, UnknownClass
from classroom import db as class_db
from classroom import schema
from classroom.identity import MAX_NICKNAME, normalize_code

RUN = Outcome("p", "run", "requirements_not_met", ("a",), ("b",), "`b` not met: do b", "print(1)", 0.25)


def test_a_class_is_started_joined_recorded_and_read_back(db_url):
    store = ClassStore(db_url)
    info, key = store.start_class("  Monday \n JAX  ")
    assert info.name == "Monday JAX" and len(info.code) == 6 and normalize_code(info.code.lower()) == info.code
    assert store.class_info(info.code.lower()) == info
    ana, token = store.join(info.code, "ana")
    assert store.member(info.code, token) == ana
    assert store.record(ana, RUN)
    [row] = store.attempts(info.code)
    assert (row.learner_id, row.problem, row.kind, row.verdict, row.passed, row.failed, row.failure) == (
        ana.learner_id, "p", "run", "requirements_not_met", ("a",), ("b",), "`b` not met: do b")
    assert store.code_of(info.code, row.id) == "print(1)"
    assert store.attempts(info.code, after_id=row.id) == []
    assert store.counts(info.code) == (1, 1)


def test_keys_and_tokens_open_only_their_own_class(db_url):
    store = ClassStore(db_url)
    one, key = store.start_class()
    two, key2 = store.start_class()
    assert store.check_key(one.code, key) and not store.check_key(one.code, key2)
    for wrong in (None, "", key + "x", key.upper(), 12):
        assert not store.check_key(one.code, wrong)
    ana, token = store.join(one.code, "ana")
    assert store.member(two.code, token) is None, "a token is its class's only"
    assert store.member(one.code, token[:-1]) is None and store.member(one.code, None) is None
    with store.engine.connect() as conn:  # only digests are kept
        stored = " ".join(str(v) for v in conn.execute(text("SELECT key_hash FROM jaxplay_classes")).scalars())
        stored += " ".join(str(v) for v in conn.execute(text("SELECT token_hash FROM jaxplay_learners")).scalars())
    assert key not in stored and token not in stored


@pytest.mark.parametrize("typed, kept", [
    ("<b>bold</b><script>alert(1)</script>", "<b>bold</b><script>alert(1)</script>"),
    ("**md** [a](javascript:x) ![i](http://x)", "**md** [a](javascript:x) ![i](http://x)"),
    ("x" * 10_000, "x" * MAX_NICKNAME),
    ("👩‍🔬 Zoë", "👩‍🔬 Zoë"),
    ("a\u202eb\u0000c\nd", "ab c d"),  # a right-to-left override and controls go; a newline is a space
])
def test_a_nickname_is_kept_as_text_and_capped(db_url, typed, kept):
    store = ClassStore(db_url)
    info, _ = store.start_class()
    member, token = store.join(info.code, typed)
    assert member.nickname == kept == store.member(info.code, token).nickname
    assert [learner.nickname for learner in store.learners(info.code)] == [kept]


def test_duplicate_blank_and_unknown_joins_are_told(db_url):
    store = ClassStore(db_url)
    info, _ = store.start_class()
    store.join(info.code, "Ana")
    for same in ("ana", " ANA ", "Ａｎａ"):  # case, spaces and full-width letters make no new name
        with pytest.raises(NicknameTaken):
            store.join(info.code, same)
    for blank in ("", "   ", "\u200b\u202e"):
        with pytest.raises(BadNickname):
            store.join(info.code, blank)
    for code in ("ZZZZZZ", "", "not a code!"):
        with pytest.raises(UnknownClass):
            store.join(code, "bo")
    other, _ = store.start_class()
    store.join(other.code, "ana")  # the same name in another class is fine


def test_forget_deletes_every_row_and_later_records_are_refused(db_url):
    store = ClassStore(db_url)
    info, key = store.start_class("gone")
    keep, _ = store.start_class("kept")
    ana, token = store.join(info.code, "ana")
    bo, _ = store.join(keep.code, "bo")
    store.record(ana, RUN)
    store.record(bo, RUN)
    assert store.forget(info.code)
    assert store.class_info(info.code) is None and not store.check_key(info.code, key)
    assert store.member(info.code, token) is None
    assert store.counts(info.code) == (0, 0) and store.attempts(info.code) == []
    assert not store.record(ana, RUN), "a forgotten learner's result is not kept"
    assert store.counts(keep.code) == (1, 1), "other classes keep theirs"
    assert not store.forget(info.code)
    with pytest.raises(UnknownClass):
        store.join(info.code, "cy")


def test_records_survive_a_restart(db_url):
    store = ClassStore(db_url)
    info, key = store.start_class()
    ana, token = store.join(info.code, "ana")
    store.record(ana, RUN)
    class_db.dispose_all()
    again = ClassStore(db_url)
    assert again.check_key(info.code, key) and again.member(info.code, token) == ana
    assert len(again.attempts(info.code)) == 1


def test_threads_racing_for_one_nickname_get_it_once(db_url):
    store = ClassStore(db_url)
    info, _ = store.start_class()

    def join(i: int) -> str:
        try:
            store.join(info.code, "same" if i % 2 else f"learner {i}")
            return "joined"
        except NicknameTaken:
            return "taken"
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(join, range(40)))
    assert results.count("taken") == 19 and len(store.learners(info.code)) == 21


def test_concurrent_writers_in_threads_and_processes_lose_no_row(db_url, monkeypatch):
    # Spawned children re-run the parent's __main__ unless it is a bare module; after an AppTest in the same
    # session that is the app's script, which a child cannot import. The writers need only this module.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    store = ClassStore(db_url)
    info, _ = store.start_class()
    members = [store.join(info.code, f"t{i}")[0] for i in range(12)]
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    per_process, processes = 60, 3
    workers = [ctx.Process(target=write_many, args=(db_url, info.code, f"p{i}", per_process, start, results))
               for i in range(processes)]
    for w in workers:
        w.start()
    assert [results.get(timeout=120) for _ in workers] == ["ready"] * processes  # all joined: now write at once
    barrier = threading.Barrier(len(members))

    def write(m) -> int:
        barrier.wait(30)
        return sum(store.record(m, RUN) for _ in range(20))
    with ThreadPoolExecutor(len(members)) as threads:
        start.set()
        kept_here = sum(threads.map(write, members))
    kept_there = sum(results.get(timeout=120) for _ in workers)
    for w in workers:
        w.join(30)
    assert (kept_here, kept_there) == (12 * 20, processes * per_process)
    assert store.counts(info.code) == (12 + processes, 12 * 20 + processes * per_process)
    ids = [a.id for a in store.attempts(info.code)]
    assert len(set(ids)) == len(ids)


def test_the_default_database_is_a_wal_sqlite_file_in_the_data_folder(tmp_path):
    env = {"JAXPLAY_DATA": str(tmp_path / "data")}
    url = class_db.database_url(env)
    assert url == f"sqlite:///{tmp_path / 'data' / 'classroom.sqlite3'}"
    assert class_db.database_url({}) .endswith("/.jaxplay/classroom.sqlite3")
    assert class_db.database_url({"JAXPLAY_DB": "postgresql+psycopg://u:secret@h/db"}) == \
        "postgresql+psycopg://u:secret@h/db"
    assert "secret" not in class_db.describe("postgresql+psycopg://u:secret@h/db")
    ClassStore(url).start_class()
    with sqlite3.connect(tmp_path / "data" / "classroom.sqlite3") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# Migrations


def _extra_step(conn: Connection) -> None:
    """A stand-in version 2: one more table, and a column on an existing one."""
    conn.execute(text("CREATE TABLE jaxplay_test_extra (id INTEGER PRIMARY KEY, note VARCHAR(20))"))
    conn.execute(text("ALTER TABLE jaxplay_classes ADD COLUMN test_note VARCHAR(20)"))


def _shape(engine) -> dict[str, list[str]]:
    found = inspect(engine)
    return {t: sorted(c["name"] for c in found.get_columns(t)) for t in sorted(found.get_table_names())
            if t.startswith("jaxplay_")}


@pytest.mark.parametrize("steps", [schema.STEPS, schema.STEPS + [_extra_step]], ids=["real", "with-a-v2"])
def test_every_earlier_version_upgrades_to_the_latest_keeping_its_rows(db_url, steps):
    fresh = class_db.engine_for(db_url)
    for start in range(len(steps)):
        with fresh.begin() as conn:  # start over
            for t in ("jaxplay_test_extra", "jaxplay_unstored", "jaxplay_attempts", "jaxplay_learners", "jaxplay_classes",
                      "jaxplay_schema_version"):
                conn.execute(text(f"DROP TABLE IF EXISTS {t}"))
        assert schema.migrate(fresh, steps=steps[:start]) == 0
        with fresh.connect() as conn:
            assert schema.current_version(conn) == start
        if start >= 1:  # a class from that version must come through
            with fresh.begin() as conn:
                conn.execute(text("INSERT INTO jaxplay_classes (code, name, key_hash, created_at) "
                                  "VALUES ('OLD234', 'old', 'x', CURRENT_TIMESTAMP)"))
        assert schema.migrate(fresh, steps=steps) == start
        with fresh.connect() as conn:
            assert schema.current_version(conn) == len(steps)
            if start >= 1:
                assert conn.execute(text("SELECT name FROM jaxplay_classes")).scalar_one() == "old"
        assert schema.migrate(fresh, steps=steps) == len(steps), "a second run changes nothing"
        shape = _shape(fresh)
        assert shape["jaxplay_attempts"] == sorted(c.name for c in schema.attempts.columns)
        assert ("jaxplay_test_extra" in shape) == (len(steps) > len(schema.STEPS))


def test_a_database_newer_than_the_app_is_refused(db_url):
    engine = class_db.engine_for(db_url)
    schema.migrate(engine, steps=schema.STEPS + [_extra_step])
    with pytest.raises(schema.SchemaTooNew):
        schema.migrate(engine)


def test_app_processes_starting_together_migrate_once(db_url):
    def first_use(_: int) -> int:
        return ClassStore(db_url).ready() and 1
    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(first_use, range(8))) == 8
    with class_db.engine_for(db_url).connect() as conn:
        assert schema.current_version(conn) == schema.VERSION
        assert conn.execute(text("SELECT COUNT(*) FROM jaxplay_schema_version")).scalar_one() == 1


# Nothing lost, no one doubled: look-alike names, the cap, removing a learner, the outbox


@pytest.mark.parametrize("twin", ["an\u200da", "\u0430na", "ana\u200b", "a\u00adna", "ａｎａ", "ΑΝΑ".replace("Ν", "N"),
                                  "an\u0430", "a\u2060na", "an\ufe0fa",
                                  # issue 42: blank characters that are not format characters count as nothing
                                  "\u2800ana", "ana\u2800", "\u3164ana", "a\u115fna", "ana\uffa0", "\U0001d159ana"])
def test_a_nickname_that_looks_the_same_on_the_projector_is_taken(db_url, twin):
    store = ClassStore(db_url)
    info, _ = store.start_class()
    store.join(info.code, "ana")
    with pytest.raises(NicknameTaken) as taken:
        store.join(info.code, twin)
    assert str(taken.value) == "ana", "the learner is told which name is taken"
    store.join(info.code, "anna")  # a different name still joins


@pytest.mark.parametrize("name, twin", [("mary", "rnary"), ("rnary", "mary"), ("Tom", "Torn"), ("olive", "0live"),
                                        ("mia", "\u217fia")])
def test_a_nickname_is_compared_by_the_full_tr39_skeleton(db_url, name, twin):
    """TR39 maps some characters to several (m to rn): comparing one character with one let "rnary" join
    beside "mary"."""
    store = ClassStore(db_url)
    info, _ = store.start_class()
    store.join(info.code, name)
    with pytest.raises(NicknameTaken):
        store.join(info.code, twin)
    for other in ("ann", "mar", "rary"):
        store.join(info.code, other)


def test_a_nickname_of_blank_characters_only_is_no_nickname_and_blanks_at_its_ends_go(db_url):
    store = ClassStore(db_url)
    info, _ = store.start_class()
    for blank in ("\u2800", "\u3164\u2800", "\u115f \u1160", "\uffa0"):
        with pytest.raises(BadNickname):
            store.join(info.code, blank)
    assert store.join(info.code, "\u2800 bo \u3164")[0].nickname == "bo"
    assert store.join(info.code, "👩‍🔬 Zoë ❤️")[0].nickname == "👩‍🔬 Zoë ❤️", "emoji sequences are kept whole"


def test_the_skeleton_table_is_tr39s():
    from classroom.identity import skeleton
    assert skeleton("m") == "rn" and skeleton("\u217f") == "rn", "several characters where TR39 says so"
    assert skeleton("\u0430") == "a" and skeleton("0") == "O" and skeleton("1") == skeleton("I") == "l"
    assert skeleton("rn") == "rn" and skeleton(skeleton("mary")) == skeleton("mary"), "prototypes are fixed points"


def test_a_class_takes_at_most_its_cap_even_in_a_burst(db_url):
    from classroom import ClassFull
    store = ClassStore(db_url)
    info, _ = store.start_class(max_learners=5)
    assert store.class_info(info.code).max_learners == 5

    def join(i: int) -> str:
        try:
            store.join(info.code, f"learner {i}")
            return "joined"
        except ClassFull:
            return "full"
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(join, range(20)))
    assert results.count("joined") == 5 and len(store.learners(info.code)) == 5
    assert store.set_max_learners(info.code, 6) == 6
    store.join(info.code, "one more")
    with pytest.raises(ClassFull):
        store.join(info.code, "and another")
    other, _ = store.start_class()
    assert other.max_learners == 200, "the default"


def test_the_teacher_removes_one_learner_and_their_rows(db_url):
    store = ClassStore(db_url)
    info, _ = store.start_class()
    ana, token = store.join(info.code, "ana")
    bo, _ = store.join(info.code, "bo")
    store.record(ana, RUN)
    store.record(bo, RUN)
    assert store.remove_learner(info.code, ana.learner_id)
    assert [learner.nickname for learner in store.learners(info.code)] == ["bo"]
    assert store.member(info.code, token) is None and not store.record(ana, RUN)
    assert store.counts(info.code) == (1, 1)
    assert not store.remove_learner(info.code, ana.learner_id)
    store.join(info.code, "ana")  # the name is free again


def test_a_retried_record_keeps_one_row(db_url):
    store = ClassStore(db_url)
    info, _ = store.start_class()
    ana, _ = store.join(info.code, "ana")
    assert all(store.record(ana, RUN, uid="attempt-1") for _ in range(3))
    with ThreadPoolExecutor(6) as pool:  # writers racing with the same attempt
        assert all(pool.map(lambda _: store.record(ana, RUN, uid="attempt-2"), range(12)))
    assert len(store.attempts(info.code)) == 2


def test_the_outbox_writes_in_order_once_and_keeps_what_it_cannot_write(db_url, tmp_path):
    from classroom.outbox import GONE, PENDING, RECORDED, Outbox
    store = ClassStore(db_url)
    info, _ = store.start_class()
    ana, token = store.join(info.code, "ana")
    down = ClassStore("postgresql+psycopg://nobody:pw@127.0.0.1:9/none")
    target = {"store": down}
    box = Outbox(tmp_path / "outbox", lambda: target["store"])
    claim = Member(info.code, 0, "", ana.token_hash)  # a session that never reached the database: the token only
    uids = [box.put(claim, Outcome("p", "run", "wrong_answer", (), (), "", f"# {i}", 0.1)) for i in range(5)]
    time.sleep(1.5)
    assert [box.status(u) for u in uids] == [PENDING] * 5 and box.error
    assert len(list((tmp_path / "outbox").glob("*.json"))) == 5
    assert oct((tmp_path / "outbox").stat().st_mode & 0o777) == "0o700"
    assert {oct(p.stat().st_mode & 0o777) for p in (tmp_path / "outbox").glob("*.json")} == {"0o600"}
    assert token not in "".join(p.read_text() for p in (tmp_path / "outbox").glob("*.json"))
    target["store"] = store  # the database is back
    assert box.wait(uids[-1], 15) == RECORDED
    rows = store.attempts(info.code)
    assert [store.code_of(info.code, r.id) for r in rows] == [f"# {i}" for i in range(5)], "in order, once"
    assert box.flush() and len(store.attempts(info.code)) == 5
    store.forget(info.code)
    gone = box.put(claim, Outcome("p", "run", "accepted", (), (), "", "late", 0.1))
    assert box.wait(gone, 15) == GONE and not list((tmp_path / "outbox").glob("*.json"))
    box.stop()


def test_a_retry_after_a_lost_answer_doubles_no_row(db_url, tmp_path):
    """The write went in but its answer was lost (the file stays): the next flush finds the id and stops there."""
    from classroom.outbox import Outbox
    store = ClassStore(db_url)
    info, _ = store.start_class()
    ana, _ = store.join(info.code, "ana")
    box = Outbox(tmp_path / "outbox", store)
    box.start = lambda: box  # no writer thread: the test drives it
    uid = box.put(ana, RUN)
    [path] = list(box.folder.glob("*.json"))
    copy = path.read_bytes()
    assert box.flush()
    path.write_bytes(copy)  # as if the file survived a write whose answer never came
    assert box.flush()
    assert len(store.attempts(info.code)) == 1 and store.has_attempt(uid)


def test_upgrading_recomputes_nickname_keys_and_keeps_look_alike_learners(db_url):
    engine = class_db.engine_for(db_url)
    schema.migrate(engine, steps=schema.STEPS[:1])
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO jaxplay_classes (code, name, key_hash, created_at) "
                          "VALUES ('OLD234', 'old', 'x', CURRENT_TIMESTAMP)"))
        for i, nick in enumerate(["\u0430na", "ana", "bo"]):
            conn.execute(text("INSERT INTO jaxplay_learners (class_code, nickname, nickname_key, token_hash, joined_at) "
                              "VALUES ('OLD234', :n, :n, :t, CURRENT_TIMESTAMP)"), {"n": nick, "t": f"t{i}"})
    store = ClassStore(db_url).ready()
    assert [learner.nickname for learner in store.learners("OLD234")] == ["\u0430na", "ana", "bo"]
    with pytest.raises(NicknameTaken):
        store.join("OLD234", "ANA")


def test_the_sqlite_file_and_its_folder_are_the_app_users_only(tmp_path):
    url = class_db.database_url({"JAXPLAY_DATA": str(tmp_path / "data")})
    ClassStore(url).start_class()
    assert oct((tmp_path / "data").stat().st_mode & 0o777) == "0o700"
    for name in ("classroom.sqlite3", "classroom.sqlite3-wal", "classroom.sqlite3-shm"):
        assert oct((tmp_path / "data" / name).stat().st_mode & 0o777) == "0o600", name


# No record blocks the others (issue 42): storable texts, a refused record retried then set aside


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=60)  # NUL and lone surrogates included


def _quiet_outbox(folder, store):
    """An outbox without its writer thread: the test drives ``flush``."""
    from classroom.outbox import Outbox
    box = Outbox(folder, store)
    box.start = lambda: box
    return box


def _raw_entry(box, member: Member, outcome: Outcome, uid: str) -> None:
    """A record as an older version of the app kept it: its texts as they came, NUL and surrogates included."""
    import dataclasses
    import json as _json
    entry = {"uid": uid, "class_code": member.class_code, "token_hash": member.token_hash,
             "learner_id": member.learner_id, "at": "2026-03-02T09:00:00", "outcome": dataclasses.asdict(outcome)}
    (box.folder / f"{time.time_ns():020d}-1-00000001-{uid}.json").write_text(_json.dumps(entry))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=ANY_TEXT, kind=ANY_TEXT, verdict=ANY_TEXT, failure=ANY_TEXT, code=ANY_TEXT,
       ids=st.lists(ANY_TEXT, max_size=4), seconds=st.floats(allow_nan=True, allow_infinity=True))
def test_every_text_a_record_carries_reaches_the_database_whatever_unicode_it_holds(
        db_url, tmp_path, problem, kind, verdict, failure, code, ids, seconds):
    from classroom.outbox import RECORDED
    from classroom.results import storable
    store = ClassStore(db_url)
    info, _ = store.start_class()
    ana, _ = store.join(info.code, "ana")
    box = _quiet_outbox(tmp_path / f"outbox-{time.time_ns()}", store)
    result = Outcome(problem, kind, verdict, tuple(ids), tuple(ids[::-1]), failure, code, seconds)
    uid = box.put(ana, result)
    assert box.flush() and box.status(uid) == RECORDED, box.error
    [row] = store.attempts(info.code)
    assert row.problem == storable(problem, 200) and row.failure == storable(failure, 1000)
    assert row.kind == storable(kind, 16) and row.verdict == storable(verdict, 32)
    assert store.code_of(info.code, row.id) == storable(code, 100_000)
    assert all("\x00" not in t and not any(0xD800 <= ord(c) < 0xE000 for c in t)
               for t in (row.problem, row.failure, *row.passed, *row.failed))
    store.forget(info.code)


def test_a_nul_and_a_lone_surrogate_then_ten_others_are_all_recorded(db_url, tmp_path):
    """The issue's stuck class: PostgreSQL refuses a NUL and SQLite a lone surrogate, and the outbox stopped
    at the first such record for every learner, also after a restart. Both kinds of record are written here
    as the hook keeps them now and as an older version left them on disk (texts as they came)."""
    from classroom.outbox import RECORDED
    store = ClassStore(db_url)
    info, _ = store.start_class()
    people = [store.join(info.code, f"learner {i}")[0] for i in range(12)]
    box = _quiet_outbox(tmp_path / "outbox", store)
    nul = Outcome("p", "run", "runtime_error", (), (), "Runtime Error: ValueError: a\x00b", "raise ValueError('\x00')", 1.0)
    lone = Outcome("p", "run", "runtime_error", (), (), "Runtime Error: ValueError: \ud800", "raise ValueError('\ud800')", 1.0)
    _raw_entry(box, people[0], nul, "left-by-an-old-server-nul")
    _raw_entry(box, people[1], lone, "left-by-an-old-server-lone")
    uids = [box.put(people[0], nul), box.put(people[1], lone)]
    uids += [box.put(m, Outcome("p", "run", "accepted", ("a",), (), "", f"# {i}", 0.5)) for i, m in enumerate(people[2:])]
    assert box.flush(), box.error
    assert [box.status(u) for u in uids] == [RECORDED] * 12
    rows = store.attempts(info.code)
    assert len(rows) == 14 and not list(box.folder.glob("*.json")), "every record in, none stuck"
    assert {r.failure for r in rows if r.verdict == "runtime_error"} == {
        "Runtime Error: ValueError: a\ufffdb", "Runtime Error: ValueError: \ufffd"}


def test_a_record_the_database_refuses_is_retried_then_set_aside_while_the_others_flow(db_url, tmp_path, monkeypatch):
    from classroom import outbox as ob
    monkeypatch.setattr(ob, "RETRY_S", 0.05)
    store = ClassStore(db_url)
    info, key = store.start_class()
    ana, _ = store.join(info.code, "ana")
    bo, _ = store.join(info.code, "bo")
    tries = []

    class Refusing:
        """The store, refusing one record's write however often it is tried (a value no sanitizing fixes)."""
        def __getattr__(self, name):
            return getattr(store, name)

        def record_by(self, code, token_hash, learner_id, result, *, uid=None, at=None):
            if result.code == "poison":
                tries.append(time.monotonic())
                raise ValueError("refused")
            return store.record_by(code, token_hash, learner_id, result, uid=uid, at=at)
    box = _quiet_outbox(tmp_path / "outbox", Refusing())
    bad = box.put(ana, Outcome("p", "run", "wrong_answer", (), (), "", "poison", 0.1))
    good = [box.put(m, Outcome("p", "run", "accepted", (), (), "", f"# {i}", 0.1)) for i, m in enumerate([bo, ana, bo])]
    assert box.flush()
    assert [box.status(u) for u in good] == [ob.RECORDED] * 3, "the records after the refused one flow"
    assert box.status(bad) == ob.PENDING and len(tries) == 1 and store.unstored_count(info.code) == 0
    deadline = time.monotonic() + 20
    while box.status(bad) == ob.PENDING and time.monotonic() < deadline:
        box.flush()
        time.sleep(0.02)
    assert box.status(bad) == ob.UNSTORED and len(tries) == ob.MAX_TRIES
    gaps = [b - a for a, b in zip(tries, tries[1:])]
    assert all(later > earlier for earlier, later in zip(gaps, gaps[1:])), f"a growing delay: {gaps}"
    [kept] = list((box.folder / "aside").glob("*.json"))
    assert "poison" in kept.read_text() and oct(kept.stat().st_mode & 0o777) == "0o600", "kept on disk"
    assert store.unstored_count(info.code) == 1 and box.aside() == 1, "counted for the teacher"
    assert box.find(bad)["state"] == ob.UNSTORED
    assert len(store.attempts(info.code)) == 3 and not list(box.folder.glob("*.json"))
    box.flush()
    assert store.unstored_count(info.code) == 1, "counted once"
    store.forget(info.code)
    assert store.unstored_count(info.code) == 0


def test_a_locked_database_holds_every_record_and_counts_no_try_against_them(tmp_path, monkeypatch):
    """A database that takes no write (SQLite's write lock held elsewhere) is an outage, not a bad record:
    the writer stops, nothing is moved aside, and all of it goes in once the lock is released."""
    from classroom import outbox as ob
    monkeypatch.setattr(class_db, "BUSY_TIMEOUT_S", 0.2)
    url = f"sqlite:///{tmp_path / 'locked.sqlite3'}"
    store = ClassStore(url)
    info, _ = store.start_class()
    ana, _ = store.join(info.code, "ana")
    box = _quiet_outbox(tmp_path / "outbox", store)
    uids = [box.put(ana, Outcome("p", "run", "accepted", (), (), "", f"# {i}", 0.1)) for i in range(3)]
    holder = sqlite3.connect(tmp_path / "locked.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for _ in range(ob.MAX_TRIES + 1):
            assert not box.flush() and box.error
        assert [box.status(u) for u in uids] == [ob.PENDING] * 3 and box.aside() == 0
        assert all('"tries": 0' in p.read_text() for p in box.folder.glob("*.json"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert box.flush() and [box.status(u) for u in uids] == [ob.RECORDED] * 3
