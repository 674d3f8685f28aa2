"""The class tables and their migrations: a version table, and one upgrade step per version.

``migrate(engine)`` brings any earlier database to ``VERSION`` in one transaction, under a lock (SQLite's write
lock; a PostgreSQL advisory lock), so app processes starting together upgrade it once. A database newer than
this code is refused rather than written to. To change the schema: add a step to ``STEPS`` (never edit an
old one), bump nothing else; ``tests/test_classroom_store.py`` upgrades from every earlier version.
"""
from __future__ import annotations

from typing import Callable

from sqlalchemy import (BigInteger, Column, Connection, DateTime, Engine, Float, ForeignKey, Index, Integer,
                        MetaData, String, Table, Text, UniqueConstraint, inspect, select, text)

from classroom.db import writing

metadata = MetaData()

schema_version = Table("jaxplay_schema_version", metadata, Column("version", Integer, nullable=False))

classes = Table(
    "jaxplay_classes", metadata,
    Column("code", String(16), primary_key=True),
    Column("name", String(200), nullable=False, server_default=""),
    Column("key_hash", String(64), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("max_learners", Integer, nullable=False, server_default="200"),
    Column("problem", String(200), nullable=False, server_default=""),
)

learners = Table(
    "jaxplay_learners", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", String(16), ForeignKey("jaxplay_classes.code", ondelete="CASCADE"), nullable=False),
    Column("nickname", String(200), nullable=False),
    Column("nickname_key", String(200), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("joined_at", DateTime, nullable=False),
    UniqueConstraint("class_code", "nickname_key", name="jaxplay_learners_one_nickname"),
)

attempts = Table(
    "jaxplay_attempts", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("class_code", String(16), ForeignKey("jaxplay_classes.code", ondelete="CASCADE"), nullable=False),
    Column("learner_id", Integer, ForeignKey("jaxplay_learners.id", ondelete="CASCADE"), nullable=False),
    Column("problem", String(200), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("verdict", String(32), nullable=False),
    Column("requirements_passed", Text, nullable=False, server_default=""),
    Column("requirements_failed", Text, nullable=False, server_default=""),
    Column("failure", Text, nullable=False, server_default=""),
    Column("code", Text, nullable=False, server_default=""),
    Column("elapsed_s", Float, nullable=False, server_default="0"),
    Column("at", DateTime, nullable=False),
    Column("uid", String(40), nullable=True),
    Index("jaxplay_attempts_by_class", "class_code", "id"),
    Index("jaxplay_attempts_one_uid", "uid", unique=True),
)

unstored = Table(
    "jaxplay_unstored", metadata,
    Column("uid", String(40), primary_key=True),
    Column("class_code", String(16), ForeignKey("jaxplay_classes.code", ondelete="CASCADE"), nullable=False),
    Column("at", DateTime, nullable=False),
    Column("reason", String(200), nullable=False, server_default=""),
    Index("jaxplay_unstored_by_class", "class_code"),
)
"""Records the database refused again and again (``classroom.outbox``): each is kept on the server's disk,
and counted here, by class, so the teacher's board says how many could not be stored."""


def _v1_tables(meta: MetaData) -> None:
    """Version 1's tables exactly as they were (later steps change the live definitions above)."""
    Table("jaxplay_classes", meta,
          Column("code", String(16), primary_key=True),
          Column("name", String(200), nullable=False, server_default=""),
          Column("key_hash", String(64), nullable=False),
          Column("created_at", DateTime, nullable=False))
    Table("jaxplay_learners", meta,
          Column("id", Integer, primary_key=True, autoincrement=True),
          Column("class_code", String(16), ForeignKey("jaxplay_classes.code", ondelete="CASCADE"), nullable=False),
          Column("nickname", String(200), nullable=False),
          Column("nickname_key", String(200), nullable=False),
          Column("token_hash", String(64), nullable=False, unique=True),
          Column("joined_at", DateTime, nullable=False),
          UniqueConstraint("class_code", "nickname_key", name="jaxplay_learners_one_nickname"))
    Table("jaxplay_attempts", meta,
          Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
          Column("class_code", String(16), ForeignKey("jaxplay_classes.code", ondelete="CASCADE"), nullable=False),
          Column("learner_id", Integer, ForeignKey("jaxplay_learners.id", ondelete="CASCADE"), nullable=False),
          Column("problem", String(200), nullable=False),
          Column("kind", String(16), nullable=False),
          Column("verdict", String(32), nullable=False),
          Column("requirements_passed", Text, nullable=False, server_default=""),
          Column("requirements_failed", Text, nullable=False, server_default=""),
          Column("failure", Text, nullable=False, server_default=""),
          Column("code", Text, nullable=False, server_default=""),
          Column("elapsed_s", Float, nullable=False, server_default="0"),
          Column("at", DateTime, nullable=False),
          Index("jaxplay_attempts_by_class", "class_code", "id"))


def _v1(conn: Connection) -> None:
    """Classes, learners and their recorded Runs and Submits."""
    frozen = MetaData()
    _v1_tables(frozen)
    frozen.create_all(conn)


def _v2(conn: Connection) -> None:
    """Each attempt's unique id (a retried write never doubles a row), each class's cap on learners and the
    problem it is taught on (its join link opens that problem), and
    nicknames compared by their confusable skeleton (existing keys recomputed; two learners whose names
    now collide keep both rows, the later one's key made unique)."""
    conn.execute(text("ALTER TABLE jaxplay_attempts ADD COLUMN uid VARCHAR(40)"))
    conn.execute(text("CREATE UNIQUE INDEX jaxplay_attempts_one_uid ON jaxplay_attempts (uid)"))
    conn.execute(text("ALTER TABLE jaxplay_classes ADD COLUMN max_learners INTEGER NOT NULL DEFAULT 200"))
    conn.execute(text("ALTER TABLE jaxplay_classes ADD COLUMN problem VARCHAR(200) NOT NULL DEFAULT ''"))
    from classroom.identity import nickname_key
    rows = conn.execute(text("SELECT id, class_code, nickname FROM jaxplay_learners ORDER BY id")).all()
    conn.execute(text("UPDATE jaxplay_learners SET nickname_key = " +  # clear first: no clash on the way
                      ("'#' || CAST(id AS TEXT)" if conn.dialect.name == "sqlite" else "'#' || id::text")))
    taken: set[tuple[str, str]] = set()
    for row in rows:
        key = nickname_key(row.nickname)
        if (row.class_code, key) in taken:
            key = f"{key}#{row.id}"
        taken.add((row.class_code, key))
        conn.execute(text("UPDATE jaxplay_learners SET nickname_key = :k WHERE id = :i"), {"k": key, "i": row.id})


def _v3(conn: Connection) -> None:
    """Records that could not be stored, counted per class (the rows themselves stay on the server's disk),
    and nicknames compared by the full TR39 skeleton with blank characters as nothing (keys recomputed as in
    version 2: two learners whose names now collide keep both rows)."""
    _recompute_nickname_keys(conn)
    frozen = MetaData()
    Table("jaxplay_classes", frozen, Column("code", String(16), primary_key=True))
    Table("jaxplay_unstored", frozen,
          Column("uid", String(40), primary_key=True),
          Column("class_code", String(16), ForeignKey("jaxplay_classes.code", ondelete="CASCADE"), nullable=False),
          Column("at", DateTime, nullable=False),
          Column("reason", String(200), nullable=False, server_default=""),
          Index("jaxplay_unstored_by_class", "class_code"))
    frozen.tables["jaxplay_unstored"].create(conn)


def _recompute_nickname_keys(conn: Connection) -> None:
    from classroom.identity import nickname_key
    rows = conn.execute(text("SELECT id, class_code, nickname FROM jaxplay_learners ORDER BY id")).all()
    conn.execute(text("UPDATE jaxplay_learners SET nickname_key = " +
                      ("'#' || CAST(id AS TEXT)" if conn.dialect.name == "sqlite" else "'#' || id::text")))
    taken: set[tuple[str, str]] = set()
    for row in rows:
        key = nickname_key(row.nickname)
        if (row.class_code, key) in taken:
            key = f"{key}#{row.id}"
        taken.add((row.class_code, key))
        conn.execute(text("UPDATE jaxplay_learners SET nickname_key = :k WHERE id = :i"), {"k": key, "i": row.id})


STEPS: list[Callable[[Connection], None]] = [_v1, _v2, _v3]
"""``STEPS[n]`` upgrades a database at version ``n`` to ``n + 1``."""
VERSION = len(STEPS)


class SchemaTooNew(RuntimeError):
    """The database was upgraded by a newer version of the app; this one does not write to it."""


def current_version(conn: Connection) -> int:
    """The database's schema version (0: no tables of ours yet)."""
    if not inspect(conn).has_table(schema_version.name):
        return 0
    return int(conn.execute(select(schema_version.c.version)).scalar_one_or_none() or 0)


def migrate(engine: Engine, *, steps: list[Callable[[Connection], None]] | None = None) -> int:
    """Upgrade the database to the latest version (``steps`` stands in for ``STEPS`` in tests); returns
    the version it was at before."""
    steps = STEPS if steps is None else steps
    with writing(engine) as conn:
        if conn.dialect.name == "postgresql":  # held to the end of this transaction
            conn.execute(text("SELECT pg_advisory_xact_lock(7243001)"))
        before = current_version(conn)
        if before > len(steps):
            raise SchemaTooNew(f"the class database is at schema version {before}, newer than this app's "
                               f"{len(steps)}: upgrade the app")
        if before == len(steps):
            return before
        if before == 0:
            schema_version.create(conn, checkfirst=True)
        for step in steps[before:]:
            step(conn)
        conn.execute(schema_version.delete())
        conn.execute(schema_version.insert().values(version=len(steps)))
        return before
