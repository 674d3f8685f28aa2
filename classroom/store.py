"""The class store: classes, the learners who joined them and their recorded Runs and Submits.

Every operation is one short transaction, so many sessions (and many app processes on PostgreSQL) can
write at once: a join is one insert guarded by a unique constraint (two learners racing for one nickname:
one is told), a record is one insert that only lands while its learner still exists, forgetting a class
deletes its rows in one transaction.
"""
from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass

from sqlalchemy import and_, delete, exists, func, insert, literal, select
from sqlalchemy.exc import IntegrityError

from classroom import identity, schema
from classroom.db import database_url, engine_for, writing
from classroom.results import Outcome
from classroom.schema import attempts, classes, learners


class UnknownClass(LookupError):
    """No class has this code (never started, mistyped, or forgotten by its teacher)."""


class NicknameTaken(ValueError):
    """Someone in the class already has this nickname."""


@dataclass(frozen=True)
class ClassInfo:
    code: str
    name: str
    created_at: dt.datetime


@dataclass(frozen=True)
class Member:
    """A learner of a class, as the server knows them (from their token, never from a nickname)."""

    class_code: str
    learner_id: int
    nickname: str


@dataclass(frozen=True)
class Learner:
    id: int
    nickname: str
    joined_at: dt.datetime


@dataclass(frozen=True)
class Attempt:
    """One recorded Run or Submit (without its code: ``code_of`` reads that)."""

    id: int
    learner_id: int
    problem: str
    kind: str
    verdict: str
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    failure: str
    elapsed_s: float
    at: dt.datetime
    """UTC."""


def now() -> dt.datetime:
    """UTC, without a time zone (SQLite keeps none): every time in the store is UTC."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class ClassStore:
    """The class tables of one database (``url``; default ``classroom.db.database_url()``)."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or database_url()
        self.engine = engine_for(self.url)
        self._migrated = False
        self._lock = threading.Lock()

    def ready(self) -> "ClassStore":
        """Create or upgrade the tables once per store (raises if the database cannot be reached)."""
        if not self._migrated:
            with self._lock:
                if not self._migrated:
                    schema.migrate(self.engine)
                    self._migrated = True
        return self

    # Teachers

    def start_class(self, name: str = "") -> tuple[ClassInfo, str]:
        """A new class and its board's secret key (shown once; only its digest is kept)."""
        self.ready()
        key = identity.new_secret()
        name = identity.one_line(name, identity.MAX_CLASS_NAME)
        for _ in range(20):
            info = ClassInfo(identity.new_code(), name, now())
            try:
                with writing(self.engine) as conn:
                    conn.execute(insert(classes).values(code=info.code, name=info.name,
                                                        key_hash=identity.digest(key), created_at=info.created_at))
                return info, key
            except IntegrityError:  # the code is taken: draw another
                continue
        raise RuntimeError("could not find a free class code")

    def class_info(self, code: str) -> ClassInfo | None:
        code = identity.normalize_code(code)
        if not code:
            return None
        self.ready()
        with self.engine.connect() as conn:
            row = conn.execute(select(classes.c.code, classes.c.name, classes.c.created_at)
                               .where(classes.c.code == code)).first()
        return ClassInfo(*row) if row else None

    def check_key(self, code: str, key: object) -> bool:
        """Whether ``key`` opens the board of class ``code``."""
        code = identity.normalize_code(code)
        if not code:
            return False
        self.ready()
        with self.engine.connect() as conn:
            stored = conn.execute(select(classes.c.key_hash).where(classes.c.code == code)).scalar_one_or_none()
        return stored is not None and identity.same_secret(key, stored)

    def forget(self, code: str) -> bool:
        """Delete the class and every row of it; False if there was none."""
        code = identity.normalize_code(code)
        self.ready()
        with writing(self.engine) as conn:
            conn.execute(delete(attempts).where(attempts.c.class_code == code))
            conn.execute(delete(learners).where(learners.c.class_code == code))
            return conn.execute(delete(classes).where(classes.c.code == code)).rowcount > 0

    # Learners

    def join(self, code: str, nickname: object) -> tuple[Member, str]:
        """Join class ``code``: the member and their secret token (kept in their browser only)."""
        nick = identity.clean_nickname(nickname)
        code = identity.normalize_code(code)
        if self.class_info(code) is None:
            raise UnknownClass(code)
        token = identity.new_secret()
        try:
            with writing(self.engine) as conn:
                learner_id = conn.execute(insert(learners).values(
                    class_code=code, nickname=nick, nickname_key=identity.nickname_key(nick),
                    token_hash=identity.digest(token), joined_at=now())).inserted_primary_key[0]
        except IntegrityError as exc:
            if self.class_info(code) is None:  # forgotten meanwhile (the foreign key refused the row)
                raise UnknownClass(code) from exc
            raise NicknameTaken(nick) from exc
        return Member(code, int(learner_id), nick), token

    def member(self, code: str, token: object) -> Member | None:
        """The learner whose token this is, in class ``code``; None if it is not one (a forgotten class)."""
        code = identity.normalize_code(code)
        if not code or not isinstance(token, str) or not token:
            return None
        self.ready()
        with self.engine.connect() as conn:
            row = conn.execute(select(learners.c.id, learners.c.nickname).where(
                and_(learners.c.class_code == code, learners.c.token_hash == identity.digest(token)))).first()
        return Member(code, int(row.id), row.nickname) if row else None

    def learners(self, code: str) -> list[Learner]:
        self.ready()
        with self.engine.connect() as conn:
            rows = conn.execute(select(learners.c.id, learners.c.nickname, learners.c.joined_at)
                                .where(learners.c.class_code == identity.normalize_code(code))
                                .order_by(learners.c.id)).all()
        return [Learner(int(r.id), r.nickname, r.joined_at) for r in rows]

    # Runs and Submits

    def record(self, member: Member, result: Outcome) -> bool:
        """Keep one graded Run or Submit; False if the learner is no longer in the class (forgotten)."""
        self.ready()
        still_there = exists().where(and_(learners.c.id == member.learner_id,
                                          learners.c.class_code == member.class_code))
        row = select(*[literal(v) for v in (
            member.class_code, member.learner_id, result.problem, result.kind, result.verdict,
            " ".join(result.passed), " ".join(result.failed), result.failure, result.code,
            float(result.elapsed_s), now())]).where(still_there)
        with writing(self.engine) as conn:
            done = conn.execute(insert(attempts).from_select(
                ["class_code", "learner_id", "problem", "kind", "verdict", "requirements_passed",
                 "requirements_failed", "failure", "code", "elapsed_s", "at"], row)
                .execution_options(preserve_rowcount=True))  # (an INSERT's rowcount is kept only when asked)
        return done.rowcount == 1

    def attempts(self, code: str, after_id: int = 0) -> list[Attempt]:
        """The class's recorded Runs and Submits with an id above ``after_id``, oldest first."""
        self.ready()
        cols = [attempts.c[name] for name in ("id", "learner_id", "problem", "kind", "verdict",
                                               "requirements_passed", "requirements_failed", "failure",
                                               "elapsed_s", "at")]
        with self.engine.connect() as conn:
            rows = conn.execute(select(*cols).where(and_(attempts.c.class_code == identity.normalize_code(code),
                                                         attempts.c.id > after_id))
                                .order_by(attempts.c.id)).all()
        return [Attempt(int(r.id), int(r.learner_id), r.problem, r.kind, r.verdict,
                        tuple(r.requirements_passed.split()), tuple(r.requirements_failed.split()), r.failure,
                        float(r.elapsed_s), r.at) for r in rows]

    def code_of(self, code: str, attempt_id: int) -> str | None:
        """The code graded by one recorded attempt of class ``code``."""
        self.ready()
        with self.engine.connect() as conn:
            return conn.execute(select(attempts.c.code).where(and_(
                attempts.c.class_code == identity.normalize_code(code), attempts.c.id == attempt_id))
            ).scalar_one_or_none()

    def counts(self, code: str) -> tuple[int, int]:
        """(learners, recorded attempts) of a class."""
        self.ready()
        code = identity.normalize_code(code)
        with self.engine.connect() as conn:
            n_learners = conn.execute(select(func.count()).select_from(learners)
                                      .where(learners.c.class_code == code)).scalar_one()
            n_attempts = conn.execute(select(func.count()).select_from(attempts)
                                      .where(attempts.c.class_code == code)).scalar_one()
        return int(n_learners), int(n_attempts)

