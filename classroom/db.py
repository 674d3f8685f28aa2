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
STATEMENT_TIMEOUT_S = 10
"""PostgreSQL's own bound on one statement (a lock wait, a slow query); a server that does not answer at all
(stopped, or a dropped network path) is bounded by the socket's timeouts below and, for a page, by
``pages/services/class_store.CALL_TIMEOUT_S``."""
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
    kwargs: dict[str, Any] = {"pool_pre_ping": True, "pool_size": 10, "max_overflow": 20, "pool_timeout": 5,
                              "pool_recycle": 1800}
    if parsed.get_backend_name() == "postgresql":
        # libpq's connect timeout covers the whole handshake (a stopped server that accepts TCP and never
        # answers included); TCP keepalives and tcp_user_timeout end a connection whose network path dropped
        # (unacknowledged data for 10 s) instead of the kernel's quarter of an hour.
        kwargs["connect_args"] = {"connect_timeout": CONNECT_TIMEOUT_S, "keepalives": 1, "keepalives_idle": 10,
                                  "keepalives_interval": 3, "keepalives_count": 3, "tcp_user_timeout": 10_000,
                                  "options": f"-c statement_timeout={STATEMENT_TIMEOUT_S * 1000}"
                                             f" -c lock_timeout={STATEMENT_TIMEOUT_S * 1000}"}
    return create_engine(parsed, **kwargs)


def private_dir(path: Path) -> Path:
    """``path`` as a folder only the app's user can open (0700): it holds learners' code."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        if path.stat().st_uid == os.getuid():
            os.chmod(path, 0o700)
    except OSError:
        pass
    return path


def private_file(path: Path) -> None:
    """Create ``path`` (if missing) readable and writable by the app's user only (0600)."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    try:
        if path.stat().st_uid == os.getuid():
            os.chmod(path, 0o600)
    except OSError:
        pass


def _sqlite(parsed: Any) -> Engine:
    path = parsed.database
    if path and path != ":memory:" and not path.startswith("file:"):
        # The folder 0700 and the file 0600 before SQLite opens it: SQLite gives its -wal and -shm files the
        # database file's mode, so all three stay the app user's.
        private_dir(Path(path).parent)
        private_file(Path(path))
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
