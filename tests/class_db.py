"""The class store's databases under test: a SQLite file, and the PostgreSQL cluster ``.ci/run`` starts
(``JAXPLAY_TEST_PG``, an empty database the tests may fill). In CI a missing PostgreSQL is a failure; on a
developer's machine without one its cases skip."""
from __future__ import annotations

import os

import pytest

PG_URL = os.environ.get("JAXPLAY_TEST_PG", "").strip()
_WORKER_DB: dict[str, str] = {}


def pg_url_or_skip() -> str:
    """The database this test process may fill: the cluster's own, or, under pytest-xdist, one database per
    worker (``jaxplay_test_gw1``...), made on first use, so that two workers never drop each other's tables."""
    if not PG_URL:
        if os.environ.get("CI"):
            pytest.fail("JAXPLAY_TEST_PG is not set: .ci/run starts a PostgreSQL cluster and exports it")
        pytest.skip("no PostgreSQL to test against (bash .ci/postgres start DIR prints a URL for JAXPLAY_TEST_PG)")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker:
        return PG_URL
    if worker not in _WORKER_DB:
        from sqlalchemy import create_engine, text
        from sqlalchemy.engine import make_url
        url = make_url(PG_URL)
        name = f"{url.database}_{worker}"
        engine = create_engine(url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first():
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        engine.dispose()
        _WORKER_DB[worker] = url.set(database=name).render_as_string(hide_password=False)
    return _WORKER_DB[worker]


def empty_pg() -> str:
    """The test cluster's database with none of the class tables in it."""
    from sqlalchemy import create_engine, text
    url = pg_url_or_skip()
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE IF EXISTS jaxplay_unstored, jaxplay_attempts, jaxplay_learners, jaxplay_classes, "
                          "jaxplay_schema_version, jaxplay_test_extra CASCADE"))
    engine.dispose()
    from classroom.db import dispose_all
    dispose_all()
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """An empty class database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classroom.sqlite3'}"
    return empty_pg()


def write_many(url: str, code: str, nickname: str, rows: int, start, results) -> None:
    """In a process of its own: join class ``code`` and record ``rows`` Runs as fast as it can, all
    processes starting together at ``start`` (a multiprocessing event); puts how many were kept on ``results``."""
    from classroom import ClassStore, Outcome
    store = ClassStore(url).ready()
    member, _ = store.join(code, nickname)
    results.put("ready")
    start.wait(60)
    kept = 0
    for i in range(rows):
        kept += store.record(member, Outcome("p", "run", "wrong_answer" if i % 2 else "accepted", ("a",), ("b",),
                                             "", f"# {nickname} {i}", 0.1))
    results.put(kept)
