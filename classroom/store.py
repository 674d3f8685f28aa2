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

from sqlalchemy import and_, delete, exists, func, insert, literal, select, text, update
from sqlalchemy.exc import IntegrityError

from classroom import identity, schema
from classroom.db import database_url, engine_for, writing
from classroom.results import Outcome, storable
from classroom.schema import attempts, classes, learners, unstored


class UnknownClass(LookupError):
    """No class has this code (never started, mistyped, or forgotten by its teacher)."""


class NicknameTaken(ValueError):
    """Someone in the class already has this nickname (or one that looks the same)."""


class ClassFull(ValueError):
    """The class has as many learners as its teacher allowed (``max_learners``)."""


DEFAULT_MAX_LEARNERS = 200
"""Learners a class takes unless its teacher sets another number on ``/class``."""
MAX_MAX_LEARNERS = 2000


@dataclass(frozen=True)
class ClassInfo:
    code: str
    name: str
    created_at: dt.datetime
    max_learners: int = DEFAULT_MAX_LEARNERS
    problem: str = ""
    """The problem's slug the class is taught on ('' for none): the join link opens it."""


@dataclass(frozen=True)
class Member:
    """A learner of a class, as the server knows them (from their token, never from a nickname)."""

    class_code: str
    learner_id: int
    nickname: str
    token_hash: str = ""
    """The digest of the learner's token: what a record is written under (the learner it names is looked up
    when the row is written, so a record made while the database was away finds its learner later)."""


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

    def start_class(self, name: str = "", max_learners: int = DEFAULT_MAX_LEARNERS,
                    problem: str = "") -> tuple[ClassInfo, str]:
        """A new class and its board's secret key (shown once; only its digest is kept)."""
        self.ready()
        key = identity.new_secret()
        name = identity.one_line(name, identity.MAX_CLASS_NAME)
        cap = _cap(max_learners)
        for _ in range(20):
            info = ClassInfo(identity.new_code(), name, now(), cap, problem[:200])
            try:
                with writing(self.engine) as conn:
                    conn.execute(insert(classes).values(code=info.code, name=info.name, max_learners=cap,
                                                        problem=info.problem,
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
            row = conn.execute(select(classes.c.code, classes.c.name, classes.c.created_at, classes.c.max_learners,
                                      classes.c.problem)
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

    def set_max_learners(self, code: str, max_learners: int) -> int:
        """Change how many learners class ``code`` takes (learners already in stay); the number kept."""
        cap = _cap(max_learners)
        self.ready()
        with writing(self.engine) as conn:
            conn.execute(update(classes).where(classes.c.code == identity.normalize_code(code))
                         .values(max_learners=cap))
        return cap

    def remove_learner(self, code: str, learner_id: int) -> bool:
        """Take one learner out of class ``code`` with every row of theirs (their token stops working, their
        nickname is free again); False if they were not in it."""
        code = identity.normalize_code(code)
        self.ready()
        with writing(self.engine) as conn:
            conn.execute(delete(attempts).where(and_(attempts.c.class_code == code,
                                                     attempts.c.learner_id == learner_id)))
            return conn.execute(delete(learners).where(and_(learners.c.class_code == code,
                                                            learners.c.id == learner_id))).rowcount > 0

    def forget(self, code: str) -> bool:
        """Delete the class and every row of it; False if there was none."""
        code = identity.normalize_code(code)
        self.ready()
        with writing(self.engine) as conn:
            conn.execute(delete(unstored).where(unstored.c.class_code == code))
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
        key = identity.nickname_key(nick)
        try:
            with writing(self.engine) as conn:
                # The class row, locked (PostgreSQL; SQLite's write lock is held already): joins to one class
                # count its learners one after another, so the cap holds under a burst.
                locked = select(classes.c.max_learners).where(classes.c.code == code)
                if conn.dialect.name == "postgresql":
                    locked = locked.with_for_update()
                cap = conn.execute(locked).scalar_one_or_none()
                if cap is None:
                    raise UnknownClass(code)
                same = conn.execute(select(learners.c.nickname).where(and_(
                    learners.c.class_code == code, learners.c.nickname_key == key))).scalar_one_or_none()
                if same is not None:
                    raise NicknameTaken(same)
                joined = conn.execute(select(func.count()).select_from(learners)
                                      .where(learners.c.class_code == code)).scalar_one()
                if joined >= cap:
                    raise ClassFull(cap)
                learner_id = conn.execute(insert(learners).values(
                    class_code=code, nickname=nick, nickname_key=key,
                    token_hash=identity.digest(token), joined_at=now())).inserted_primary_key[0]
        except IntegrityError as exc:
            if self.class_info(code) is None:  # forgotten meanwhile (the foreign key refused the row)
                raise UnknownClass(code) from exc
            raise NicknameTaken(nick) from exc
        return Member(code, int(learner_id), nick, identity.digest(token)), token

    def member(self, code: str, token: object) -> Member | None:
        """The learner whose token this is, in class ``code``; None if it is not one (a forgotten class)."""
        code = identity.normalize_code(code)
        if not code or not isinstance(token, str) or not token:
            return None
        self.ready()
        with self.engine.connect() as conn:
            row = conn.execute(select(learners.c.id, learners.c.nickname).where(
                and_(learners.c.class_code == code, learners.c.token_hash == identity.digest(token)))).first()
        return Member(code, int(row.id), row.nickname, identity.digest(token)) if row else None

    def learners(self, code: str) -> list[Learner]:
        self.ready()
        with self.engine.connect() as conn:
            rows = conn.execute(select(learners.c.id, learners.c.nickname, learners.c.joined_at)
                                .where(learners.c.class_code == identity.normalize_code(code))
                                .order_by(learners.c.id)).all()
        return [Learner(int(r.id), r.nickname, r.joined_at) for r in rows]

    # Runs and Submits

    def record(self, member: Member, result: Outcome, *, uid: str | None = None,
               at: dt.datetime | None = None) -> bool:
        """Keep one graded Run or Submit; False if the learner is no longer in the class (forgotten, removed).
        ``uid`` names the attempt: a second write of the same ``uid`` (a retry) keeps the first row and
        returns True. ``at`` is when it was graded (default now). The learner is the one whose token digest
        ``member`` carries, looked up in this very statement (by ``learner_id`` when it carries none)."""
        return self.record_by(member.class_code, member.token_hash, member.learner_id, result, uid=uid, at=at)

    def record_by(self, code: str, token_hash: str, learner_id: int, result: Outcome, *, uid: str | None = None,
                  at: dt.datetime | None = None) -> bool:
        self.ready()
        result = result.storable()  # (the outbox keeps it so already; a record left by an older version may not be)
        code, token_hash = storable(code, 16), storable(token_hash, 64)
        uid = None if uid is None else storable(uid, 40)
        who = learners.c.token_hash == token_hash if token_hash else learners.c.id == learner_id
        row = select(*[literal(v) for v in (
            code, result.problem, result.kind, result.verdict, " ".join(result.passed), " ".join(result.failed),
            result.failure, result.code, float(result.elapsed_s), at or now(), uid)],
            learners.c.id).where(and_(who, learners.c.class_code == code))
        if uid is not None:
            row = row.where(~exists().where(attempts.c.uid == uid))
        try:
            with writing(self.engine) as conn:
                done = conn.execute(insert(attempts).from_select(
                    ["class_code", "problem", "kind", "verdict", "requirements_passed", "requirements_failed",
                     "failure", "code", "elapsed_s", "at", "uid", "learner_id"], row)
                    .execution_options(preserve_rowcount=True))  # (an INSERT's rowcount is kept only when asked)
                if done.rowcount == 1 or uid is None:
                    return done.rowcount == 1
                return conn.execute(select(func.count()).select_from(attempts)
                                    .where(attempts.c.uid == uid)).scalar_one() == 1
        except IntegrityError:
            if uid is not None and self.has_attempt(uid):  # the same attempt, written by another writer meanwhile
                return True
            raise

    def writable(self) -> None:
        """Raise unless a record could be written now: the database answers and the attempts table takes a
        write (SQLite's write lock is free; PostgreSQL grants the lock an insert takes). The outbox asks when
        one record failed: if this holds, that record is the one at fault, not the database."""
        self.ready()
        with writing(self.engine) as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("LOCK TABLE jaxplay_attempts IN ROW EXCLUSIVE MODE"))
            conn.execute(select(func.count()).select_from(attempts).where(attempts.c.id == -1))

    def note_unstored(self, code: str, uid: str, at: dt.datetime, reason: str) -> bool:
        """Count one record of class ``code`` that could not be stored (kept once per ``uid``); False if the
        class no longer exists."""
        self.ready()
        code, uid = storable(code, 16), storable(uid, 40)
        row = select(literal(uid), literal(code), literal(at), literal(storable(reason, 200))).where(and_(
            exists().where(classes.c.code == code), ~exists().where(unstored.c.uid == uid)))
        try:
            with writing(self.engine) as conn:
                conn.execute(insert(unstored).from_select(["uid", "class_code", "at", "reason"], row))
        except IntegrityError:  # the same uid, noted by another writer meanwhile
            pass
        with self.engine.connect() as conn:
            return conn.execute(select(unstored.c.uid).where(unstored.c.uid == uid)).first() is not None

    def unstored_count(self, code: str) -> int:
        """How many records of class ``code`` could not be stored."""
        self.ready()
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(unstored).where(
                unstored.c.class_code == identity.normalize_code(code))).scalar_one())

    def attempt_of(self, code: str, token_hash: str, uid: str) -> Attempt | None:
        """The recorded attempt ``uid`` of the learner whose token digest this is (None if there is none):
        a learner's page asks after a reconnect what the board recorded of a Run it never saw finish."""
        self.ready()
        found = self._attempts(and_(attempts.c.class_code == identity.normalize_code(code),
                                    attempts.c.uid == storable(uid, 40),
                                    attempts.c.learner_id.in_(select(learners.c.id).where(
                                        learners.c.token_hash == token_hash))))
        return found[0] if found else None

    def has_attempt(self, uid: str) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(select(attempts.c.id).where(attempts.c.uid == uid)).first() is not None

    def attempts(self, code: str, after_id: int = 0) -> list[Attempt]:
        """The class's recorded Runs and Submits with an id above ``after_id``, in the order they were written
        (``at`` says when each was graded: a record the database took late comes later here)."""
        self.ready()
        return self._attempts(and_(attempts.c.class_code == identity.normalize_code(code), attempts.c.id > after_id))

    def _attempts(self, where) -> list[Attempt]:
        cols = [attempts.c[name] for name in ("id", "learner_id", "problem", "kind", "verdict",
                                               "requirements_passed", "requirements_failed", "failure",
                                               "elapsed_s", "at")]
        with self.engine.connect() as conn:
            rows = conn.execute(select(*cols).where(where).order_by(attempts.c.id)).all()
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



def _cap(max_learners: object) -> int:
    try:
        n = int(max_learners)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        n = DEFAULT_MAX_LEARNERS
    return max(1, min(MAX_MAX_LEARNERS, n))
