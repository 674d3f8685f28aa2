"""Where a class's records live: one SQLAlchemy engine per database URL, SQLite or PostgreSQL.

``JAXPLAY_DB`` is a SQLAlchemy URL (``postgresql+psycopg://user:password@host/db`` for a hosted class). Without
it, a SQLite file in the app's data folder (``JAXPLAY_DATA``, default ``.jaxplay/`` in the working directory),
so ``streamlit run app.py`` needs nothing else. SQLite runs in WAL mode (readers never wait for the writer);
writers queue on its lock for up to ``BUSY_TIMEOUT_S``, and a transaction that will write takes the lock at
its start (``BEGIN IMMEDIATE``), so two sessions never both read and then both try to write.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Mapping

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

BUSY_TIMEOUT_S = 20.0
"""How long a SQLite writer waits for the lock (a class of 60 pressing Run at once queues for milliseconds)."""
CONNECT_TIMEOUT_S = 5
"""How long a PostgreSQL connection may take before the app says the database cannot be reached."""
DB_FILE = "classroom.sqlite3"

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The app's data folder: ``JAXPLAY_DATA``, or ``.jaxplay/`` in the working directory."""
    env = os.environ if env is None else env
    return Path(env.get("JAXPLAY_DATA") or ".jaxplay")


def database_url(env: Mapping[str, str] | None = None) -> str:
    """``JAXPLAY_DB``, or the SQLite file in the data folder."""
    env = os.environ if env is None else env
    url = (env.get("JAXPLAY_DB") or "").strip()
    if url:
        return url
    return f"sqlite:///{(data_dir(env) / DB_FILE).resolve()}"


def describe(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a malformed URL: say nothing of it
        return "(an invalid database URL)"


def engine_for(url: str) -> Engine:
    """The process's one engine for ``url`` (created on first use; creating it does not connect)."""
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = _create(url)
        return engine


def dispose_all() -> None:
    """Close every pooled connection (tests, and a benchmark between phases)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def _create(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite(parsed)
    kwargs: dict[str, Any] = {"pool_pre_ping": True, "pool_size": 10, "max_overflow": 20, "pool_timeout": 10}
    if parsed.get_backend_name() == "postgresql":
        kwargs["connect_args"] = {"connect_timeout": CONNECT_TIMEOUT_S}
    return create_engine(parsed, **kwargs)


def _sqlite(parsed: Any) -> Engine:
    path = parsed.database
    if path and path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, pool_size=10, max_overflow=40, pool_timeout=30,
                           connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # pysqlite's own transaction handling begins lazily and as DEFERRED; SQLAlchemy's "begin" event
        # below issues the BEGIN instead, so a write transaction can take the lock at its start.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")  # durable across a crash of the app; WAL's usual setting
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("writes") else "BEGIN")

    return engine


def writing(engine: Engine):
    """A transaction that will write: on SQLite it holds the write lock from its first statement."""
    return engine.execution_options(writes=True).begin()
