"""Tables rebuilt aside and swapped in, for a full recompute on PostgreSQL.

Rewriting the rating cache in place (``DELETE`` every row, then ``COPY`` with every index and
every deferred foreign-key trigger live) spent most of PostgreSQL's time; ``TRUNCATE`` would cut
it but lock the rating pages out until the commit. Instead each table gets a shadow twin (the
same columns, defaults, identity, checks and grants, no index, no foreign key), filled by ``COPY``,
then indexed in bulk (one sort an index) and constrained (one join a foreign key), and swapped
in at the end, in the recompute's transaction:

- the foreign keys are added to the shadows first: this holds writers of the tables they point
  to (matches, players, runs) until the commit, for the time of one join a key; readers of
  those tables do not wait;
- then the live tables are locked (``ACCESS EXCLUSIVE``, asked with a short ``lock_timeout``
  and asked again, so readers never queue behind a long wait), renamed aside, and the shadows
  take their names, their indexes' and their sequences' names: catalog updates only, so the
  rating pages wait for milliseconds, and until then read the old rows;
- the old tables are dropped after the commit, in a transaction of their own: dropping a table
  with foreign keys locks the tables they point to (``ACCESS EXCLUSIVE``), which must not
  happen while the swap holds its locks. One left behind (a lock never granted, a crash) is
  dropped by the next rebuild.

Every index, constraint and sequence is read from the catalog, so the tables after a swap are
the ones the migrations made, by name and definition.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import OperationalError, connection, transaction

logger = logging.getLogger(__name__)

LOCK_NOT_AVAILABLE = "55P03"
# Each try at the swap's locks waits this long at most (readers arriving meanwhile queue behind
# it), then steps back and asks again; the last try waits as long as it takes.
LOCK_TRIES = (0.05, 0.1, 0.1, 0.2, 0.2, 0.5, 0.5, 1.0, 1.0, 2.0)
OLD_SUFFIX = "__old"
NEW_SUFFIX = "__new"


def _qn(name: str) -> str:
    return connection.ops.quote_name(name)


def _aside(name: str, kind: str, tag: str) -> str:
    """A name for an index or sequence of a shadow ("new") or an old table ("old") of the
    rebuild ``tag`` (index and sequence names are one namespace a schema): short, and the same
    for the same name, kind and tag."""
    return f"{kind}_{hashlib.md5(f'{name} {tag}'.encode()).hexdigest()[:24]}"


@dataclass
class _Index:
    name: str
    definition: str  # pg_get_indexdef of the live index
    constraint: str | None  # "p" or "u": a primary key or unique constraint it backs


@dataclass
class _Table:
    live: str
    schema: str
    tag: str
    indexes: list[_Index] = field(default_factory=list)
    # (name, definition): foreign keys (their names belong to their table, so kept as they are)
    foreign_keys: list[tuple[str, str]] = field(default_factory=list)
    identity: str | None = None  # the identity column
    sequence: str | None = None  # its sequence, schema-qualified
    referenced: set[str] = field(default_factory=set)

    @property
    def shadow(self) -> str:
        return f"{self.live}{NEW_SUFFIX}"

    @property
    def old(self) -> str:
        return f"{self.live}{OLD_SUFFIX}{self.tag}"

    def qualified(self, name: str) -> str:
        return f"{_qn(self.schema)}.{_qn(name)}"


def _describe(cursor, table: str, tag: str) -> _Table:
    cursor.execute(
        "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.oid = %s::regclass",
        [table],
    )
    described = _Table(live=table, schema=cursor.fetchone()[0], tag=tag)
    cursor.execute(
        "SELECT i.relname, pg_get_indexdef(x.indexrelid), k.contype "
        "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
        "LEFT JOIN pg_constraint k ON k.conindid = x.indexrelid AND k.conrelid = x.indrelid "
        "AND k.contype IN ('p', 'u') "
        "WHERE x.indrelid = %s::regclass ORDER BY i.relname",
        [table],
    )
    described.indexes = [_Index(*row) for row in cursor.fetchall()]
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid), confrelid::regclass::text "
        "FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f' ORDER BY conname",
        [table],
    )
    for name, definition, referenced in cursor.fetchall():
        described.foreign_keys.append((name, definition))
        if referenced != table:
            described.referenced.add(referenced)
    cursor.execute(
        "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = %s::regclass "
        "AND a.attidentity <> '' AND NOT a.attisdropped",
        [table],
    )
    identity = cursor.fetchone()
    if identity is not None:
        described.identity = identity[0]
        cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, identity[0]])
        described.sequence = cursor.fetchone()[0]
    return described


def _copy_grants(cursor, source: str, target: str, kind: str) -> None:
    """Grant on ``target`` what ``source`` grants to roles other than its owner (a reporting
    role's ``SELECT``, say): ``CREATE TABLE ... LIKE`` copies no privileges, and without this
    a recompute's swap took them away. Column privileges are not copied (the migrations grant
    none)."""
    cursor.execute(
        "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END, "
        "a.privilege_type, a.is_grantable "
        "FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a "
        "LEFT JOIN pg_roles r ON r.oid = a.grantee "
        "WHERE c.oid = %s::regclass AND a.grantee <> c.relowner",
        [source],
    )
    for grantee, privilege, grantable in cursor.fetchall():
        option = " WITH GRANT OPTION" if grantable else ""
        cursor.execute(f"GRANT {privilege} ON {kind} {target} TO {grantee}{option}")


_INDEX_DEF = re.compile(r"^CREATE (UNIQUE )?INDEX \S+ ON (?:ONLY )?\S+ (USING .*)$", re.S)


class Rebuild:
    """Shadows of ``tables`` (database table names) to fill, index and swap in.

    Use inside a transaction: ``create()``, fill ``shadow_of(table)`` (``COPY``), ``index()``,
    ``swap()``; the old tables, named with ``tag`` (the run), go after the commit
    (``transaction.on_commit``)."""

    def __init__(self, tables: list[str], tag: str):
        self.names = tables
        self.tag = tag
        self.tables: list[_Table] = []

    def shadow_of(self, table: str) -> str:
        return f"{table}{NEW_SUFFIX}"

    def create(self) -> None:
        with connection.cursor() as cursor:
            _drop_left_behind(cursor, self.names)
            self.tables = [_describe(cursor, name, self.tag) for name in self.names]
            for t in self.tables:
                cursor.execute(
                    f"CREATE TABLE {t.qualified(t.shadow)} (LIKE {t.qualified(t.live)} "
                    "INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING CONSTRAINTS "
                    "INCLUDING GENERATED INCLUDING STORAGE)"
                )
                _copy_grants(cursor, t.qualified(t.live), t.qualified(t.shadow), "TABLE")
                if t.sequence is not None:
                    cursor.execute(
                        "SELECT pg_get_serial_sequence(%s, %s)", [t.qualified(t.shadow), t.identity]
                    )
                    _copy_grants(cursor, t.sequence, cursor.fetchone()[0], "SEQUENCE")

    def steps(self) -> int:
        """How many statements ``index()`` runs (for a progress bar)."""
        return sum(len(t.indexes) + 1 for t in self.tables)

    def index(self, progress: Callable[[], None] = lambda: None) -> None:
        """The shadows' indexes (temporary names until the swap) and fresh statistics."""
        with connection.cursor() as cursor:
            for t in self.tables:
                for index in t.indexes:
                    cursor.execute(self._create_index_sql(t, index))
                    progress()
                cursor.execute(f"ANALYZE {t.qualified(t.shadow)}")
                progress()

    def _create_index_sql(self, t: _Table, index: _Index) -> str:
        temporary = _aside(index.name, "new", t.tag)
        if index.constraint is not None:
            kind = "PRIMARY KEY" if index.constraint == "p" else "UNIQUE"
            columns = re.search(r"USING \w+ \((.*)\)$", index.definition)
            assert columns is not None, index.definition
            return (
                f"ALTER TABLE {t.qualified(t.shadow)} ADD CONSTRAINT {_qn(temporary)} "
                f"{kind} ({columns[1]})"
            )
        match = _INDEX_DEF.match(index.definition)
        assert match is not None, index.definition
        return (
            f"CREATE {match[1] or ''}INDEX {_qn(temporary)} ON {t.qualified(t.shadow)} {match[2]}"
        )

    def swap(self) -> tuple[float, float]:
        """Constrain the shadows, then put them in the live tables' place. Returns how long
        the writers of the tables the foreign keys point to, and the live tables' readers, were
        held before this returned (the commit follows at once)."""
        with connection.cursor() as cursor:
            # Writers of the referenced tables wait from here to the commit; readers do not.
            referenced = sorted(set().union(*(t.referenced for t in self.tables)) - set(self.names))
            if referenced:
                _lock(cursor, referenced, "SHARE ROW EXCLUSIVE")
            constrained = time.perf_counter()
            for t in self.tables:
                for name, definition in t.foreign_keys:
                    cursor.execute(
                        f"ALTER TABLE {t.qualified(t.shadow)} ADD CONSTRAINT {_qn(name)} "
                        f"{definition}"
                    )
            # The rating pages wait from here to the commit: renames only.
            _lock(cursor, [t.qualified(t.live) for t in self.tables], "ACCESS EXCLUSIVE")
            locked = time.perf_counter()
            for t in self.tables:
                cursor.execute(f"ALTER TABLE {t.qualified(t.live)} RENAME TO {_qn(t.old)}")
                cursor.execute(f"ALTER TABLE {t.qualified(t.shadow)} RENAME TO {_qn(t.live)}")
                for index in t.indexes:
                    cursor.execute(
                        f"ALTER INDEX {t.qualified(index.name)} "
                        f"RENAME TO {_qn(_aside(index.name, 'old', t.tag))}"
                    )
                    cursor.execute(
                        f"ALTER INDEX {t.qualified(_aside(index.name, 'new', t.tag))} "
                        f"RENAME TO {_qn(index.name)}"
                    )
                if t.sequence is not None:
                    cursor.execute(
                        "SELECT pg_get_serial_sequence(%s, %s)",
                        [t.qualified(t.live), t.identity],
                    )
                    fresh = cursor.fetchone()[0]
                    name = t.sequence.rsplit(".", 1)[-1].strip('"')
                    cursor.execute(
                        f"ALTER SEQUENCE {t.sequence} RENAME TO {_qn(_aside(name, 'old', t.tag))}"
                    )
                    cursor.execute(f"ALTER SEQUENCE {fresh} RENAME TO {_qn(name)}")
        old = [t.old for t in self.tables]
        transaction.on_commit(lambda: drop_old(old))
        return time.perf_counter() - constrained, time.perf_counter() - locked


def _lock(cursor, tables: list[str], mode: str, *, wait_last: bool = True) -> None:
    """``LOCK TABLE`` asked with a short timeout and asked again: a lock request waits behind
    the transactions using the table, and every request after it waits behind it. The last try
    waits as long as it takes, unless not ``wait_last`` (it raises)."""
    cursor.execute("SHOW lock_timeout")
    before = cursor.fetchone()[0]
    statement = f"LOCK TABLE {', '.join(tables)} IN {mode} MODE"
    for attempt, wait in enumerate(LOCK_TRIES):
        last = attempt == len(LOCK_TRIES) - 1
        try:
            with transaction.atomic():  # a savepoint: a lock not granted is rolled back alone
                timeout = 0 if last and wait_last else int(wait * 1000)
                cursor.execute(f"SET LOCAL lock_timeout = '{timeout}ms'")
                cursor.execute(statement)
            break
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE or last:
                raise
            logger.info("ratings: %s not granted in %.2fs, asking again", mode, wait)
            time.sleep(wait)
    cursor.execute("SELECT set_config('lock_timeout', %s, true)", [before])


def _drop_left_behind(cursor, tables: list[str]) -> None:
    """Old tables an earlier swap left (its drop not granted, a crash), dropped if they can be
    now; one that cannot (its lock not granted; put aside in this very transaction, with
    checks pending) stays for the next rebuild."""
    for table in tables:
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE %s "
            "AND relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = %s::regclass)",
            [f"{table}{OLD_SUFFIX}%", table],
        )
        for (old,) in cursor.fetchall():
            try:
                with transaction.atomic():
                    _lock_and_drop(cursor, old)
            except OperationalError:
                logger.info("ratings: %s left for a later rebuild", old)


def _lock_and_drop(cursor, table: str) -> None:
    # Dropping a table drops its foreign keys' triggers on the tables they point to, locking
    # them ACCESS EXCLUSIVE: asked for briefly, as the swap's locks are.
    cursor.execute(
        "SELECT DISTINCT confrelid::regclass::text FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype = 'f' AND confrelid <> conrelid",
        [table],
    )
    referenced = sorted(row[0] for row in cursor.fetchall())
    _lock(cursor, [_qn(table), *referenced], "ACCESS EXCLUSIVE", wait_last=False)
    cursor.execute(f"DROP TABLE {_qn(table)}")


def drop_old(tables: list[str]) -> None:
    """The tables a swap put aside, dropped (each in a transaction of its own); one whose
    locks are not granted stays for the next rebuild."""
    for table in tables:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                _lock_and_drop(cursor, table)
        except OperationalError:
            logger.warning("ratings: %s left for the next rebuild", table)


def hold_recompute_lock() -> None:
    """A recompute's lock, held alone until its transaction ends.

    It orders a recompute against corrections replaying outside the writers' lock, which hold it
    shared (``try_recompute_lock_shared``). Without it, a correction that has rewritten rows and
    waits for the writers' lock, and a recompute that holds the writers' lock and waits for
    those rows (or for its swap's table locks), would wait for each other."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [RECOMPUTE_LOCK_KEY])


def try_recompute_lock_shared() -> bool:
    """The recompute's lock shared until this transaction ends; ``False`` while a recompute
    holds it (the caller steps back and asks again later)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock_shared(%s)", [RECOMPUTE_LOCK_KEY])
        return bool(cursor.fetchone()[0])


# The advisory lock's key: "ratings" in eight bytes, as a signed bigint.
RECOMPUTE_LOCK_KEY = int.from_bytes(b"ratings\0", "big", signed=True)
