"""A full recompute rebuilds the cache aside and swaps it in (PostgreSQL), or rewrites it in
place (SQLite): the same numbers as incremental rating, readers see the old ratings or the new
ones and never an empty cache, and a failure leaves the old ratings as they were."""

import threading
import uuid

import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.db.models import F

from ratings.models import RatedMatch, Rating, RatingChange, RatingRun
from ratings.services import shadow
from ratings.services.ratings import rate_pending, recompute, update_for_match
from tests.ratings.test_service import snapshot

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the tables swapped in are PostgreSQL's"
)
CACHE_TABLES = ("ratings_ratingchange", "ratings_ratedmatch", "ratings_rating")


def _schema():
    """Every index, constraint and identity sequence of the cache's tables, by name."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.relname, pg_get_indexdef(x.indexrelid) FROM pg_index x "
            "JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid "
            "WHERE c.relname = ANY(%s) ORDER BY 1, 2",
            [list(CACHE_TABLES)],
        )
        indexes = cursor.fetchall()
        cursor.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
            "FROM pg_constraint WHERE conrelid::regclass::text = ANY(%s) ORDER BY 1, 2",
            [list(CACHE_TABLES)],
        )
        constraints = cursor.fetchall()
        cursor.execute(
            "SELECT t, pg_get_serial_sequence(t, 'id') FROM unnest(%s::text[]) AS t ORDER BY 1",
            [list(CACHE_TABLES)],
        )
        sequences = cursor.fetchall()
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relname LIKE 'ratings\\_%%\\_\\_new' "
            "OR relname LIKE 'ratings\\_%%\\_\\_old%%'"
        )
        left = cursor.fetchall()
    return indexes, constraints, sequences, left


def _ratings(cursor):
    cursor.execute("SELECT pool, player_id, partner_id, mu, sigma, games FROM ratings_rating")
    return frozenset(cursor.fetchall())


@pytest.mark.django_db
def test_a_recompute_gives_the_numbers_of_incremental_rating_and_keeps_the_schema(league, world):
    """Rated one result at a time, then recomputed by the command: the same ratings and history;
    on PostgreSQL the swapped-in tables have the migrations' indexes, constraints and sequences
    by name, and the next result's change is appended after every rebuilt one."""
    before = _schema() if connection.vendor == "postgresql" else None
    for m in sorted(league["matches"], key=lambda m: (m.round.stage.tournament.start_date, m.id)):
        update_for_match(m.id)
    incremental = snapshot()
    call_command("recompute_ratings", "--no-progress", verbosity=0)
    assert snapshot() == incremental
    if before is not None:  # (the old tables are dropped after the commit, not in a test's)
        assert _schema()[:3] == before[:3]
    later = world.tournament("autumn", league["t"][1].start_date.replace(month=10))
    m = world.play(later, 1, league["lines"][0], league["lines"][1], 11, 3)
    update_for_match(m.id)
    newest = RatingChange.objects.filter(match=m).values_list("id", flat=True)
    assert min(newest) > max(RatingChange.objects.exclude(match=m).values_list("id", flat=True))


@pytest.mark.django_db
@on_postgresql
def test_a_recompute_keeps_what_the_cache_s_tables_grant_other_roles(league):
    """A reporting role reading the ratings (granted by an operator, not by the migrations):
    the swapped-in tables were made by ``CREATE TABLE ... LIKE``, which copies no privileges,
    and the role lost its reads at the first recompute. (The role is made in the test's
    transaction, and goes with it.)"""
    reader = f"scopa_reader_{uuid.uuid4().hex[:12]}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {reader}")
        cursor.execute(f"GRANT SELECT ON ratings_rating, ratings_ratingchange TO {reader}")
        cursor.execute(f"GRANT SELECT, INSERT ON ratings_ratedmatch TO {reader} WITH GRANT OPTION")
        sequence = "pg_get_serial_sequence('ratings_ratingchange', 'id')"
        cursor.execute(f"SELECT {sequence}")
        cursor.execute(f"GRANT USAGE ON SEQUENCE {cursor.fetchone()[0]} TO {reader}")
    for m in league["matches"]:
        update_for_match(m.id)
    recompute()

    def privileges():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT t, p, has_table_privilege(%s, t, p), "
                "has_table_privilege(%s, t, p || ' WITH GRANT OPTION') "
                "FROM unnest(%s::text[]) AS t, unnest(ARRAY['SELECT', 'INSERT']) AS p "
                "ORDER BY 1, 2",
                [reader, reader, list(CACHE_TABLES)],
            )
            tables = cursor.fetchall()
            cursor.execute(f"SELECT has_sequence_privilege(%s, {sequence}, 'USAGE')", [reader])
            return tables, cursor.fetchone()[0]

    tables, sequence_usage = privileges()
    assert tables == [
        ("ratings_ratedmatch", "INSERT", True, True),
        ("ratings_ratedmatch", "SELECT", True, True),
        ("ratings_rating", "INSERT", False, False),
        ("ratings_rating", "SELECT", True, False),
        ("ratings_ratingchange", "INSERT", False, False),
        ("ratings_ratingchange", "SELECT", True, False),
    ]
    assert sequence_usage


@pytest.mark.django_db(transaction=True)
@on_postgresql
def test_readers_see_the_old_ratings_or_the_new_ones_never_an_empty_cache(league):
    """While a recompute runs, a page's reads (another session) find every old rating until the
    swap, then every new one: never no rating, never a mix. A reader holding the table across
    the swap makes it wait (it asks again), not fail."""
    from tests.db import other_connection

    recompute()
    new = _ratings(connection.cursor())
    Rating.objects.update(mu=F("mu") + 1)  # a cache that differs from what the log gives
    old = _ratings(connection.cursor())
    seen, done = [], threading.Event()
    built, resume = threading.Event(), threading.Event()
    reader = other_connection()

    def poll():
        with other_connection() as poller:
            while not done.is_set():
                seen.append(_ratings(poller.cursor()))

    def paused(step, done_, total):
        if step == "swapping" and done_ == 0:
            built.set()
            resume.wait(20)

    def run():
        try:
            recompute(progress=paused)
        finally:
            connections.close_all()

    polling = threading.Thread(target=poll)
    polling.start()
    recomputing = threading.Thread(target=run)
    recomputing.start()
    try:
        assert built.wait(20)
        # Everything written and indexed, not swapped: the old ratings, in a transaction held
        # open across the swap.
        reader.autocommit = False
        assert _ratings(reader.cursor()) == old
        resume.set()
        recomputing.join(0.5)
        assert recomputing.is_alive()  # the swap waits for the reader ...
        assert _ratings(reader.cursor()) == old  # ... who still reads the old ratings
        reader.commit()
        recomputing.join(20)
        assert not recomputing.is_alive()
        assert _ratings(reader.cursor()) == new
        polled = len(seen)
        for _ in range(200):  # the poller reads at least twice more, after the commit
            if len(seen) > polled + 1:
                break
            done.wait(0.05)
    finally:
        resume.set()
        done.set()
        polling.join(20)
        reader.close()
    assert seen and set(seen) <= {old, new}
    assert old in seen and new in seen
    assert _schema()[3] == []  # the old tables dropped after the commit


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("step", ["writing", "indexing", "swapping"])
def test_a_recompute_that_fails_midway_leaves_the_old_ratings(league, step, monkeypatch):
    """A failure while writing, indexing or swapping the fresh tables (a lost connection, a
    killed command) rolls everything back: the old ratings, history and runs, no table left."""
    if step != "writing" and connection.vendor != "postgresql":
        pytest.skip("SQLite writes in place: no indexing, no swap")
    recompute()
    Rating.objects.update(mu=F("mu") + 1)
    old, runs = snapshot(), RatingRun.objects.count()
    rated = RatedMatch.objects.count()

    def fail(at, done, total):
        if at == step and done == total and at != "swapping":
            raise RuntimeError("connection lost")

    lock = shadow._lock

    def fail_to_swap(cursor, tables, mode):
        if mode == "ACCESS EXCLUSIVE":  # the foreign keys added, the renames next
            raise RuntimeError("connection lost")
        lock(cursor, tables, mode)

    monkeypatch.setattr(shadow, "_lock", fail_to_swap)

    with pytest.raises(RuntimeError):
        recompute(progress=fail)
    assert snapshot() == old
    assert RatingRun.objects.count() == runs and RatedMatch.objects.count() == rated
    if connection.vendor == "postgresql":
        assert _schema()[3] == []


@pytest.mark.django_db(transaction=True)
@on_postgresql
def test_a_correction_steps_back_while_a_recompute_runs(league, world):
    """A correction replaying outside the writers' lock does not start while a recompute holds
    its lock (each would end up waiting for the other): it answers "busy" and rates once the
    recompute is done."""
    from tests.db import other_connection

    rate_pending()
    first = league["matches"][0]
    world.result(first, 4, 11)
    with other_connection() as recomputing:
        recomputing.autocommit = False
        recomputing.execute("SELECT pg_advisory_xact_lock(%s)", [shadow.RECOMPUTE_LOCK_KEY])
        assert rate_pending(match_ids=[first.id]) is False
        recomputing.rollback()
    run = rate_pending(match_ids=[first.id])
    assert run and run.kind == RatingRun.Kind.REPLAY
    assert RatingChange.objects.get(match=first, player=league["players"][1]).result == "win"


@pytest.mark.django_db
def test_the_command_shows_a_bar_for_every_step_up_to_the_commit(league):
    """Each step's bar ends full (rows read and written counted, not guessed), and the last one
    is the swap (PostgreSQL) or the commit (SQLite)."""
    from io import StringIO

    err, out = StringIO(), StringIO()
    call_command("recompute_ratings", stderr=err, stdout=out)
    bars = err.getvalue()
    games = len(league["matches"])
    assert "rating: 100%" in bars and f"{games}/{games}" in bars
    steps = ["reading", "rating", "writing"]
    steps += ["indexing", "swapping"] if connection.vendor == "postgresql" else ["committing"]
    for step in steps:
        assert f"{step}: 100%" in bars
    assert bars.index("reading") < bars.index("writing") < bars.index(steps[-1])
    assert f": {games} games in " in out.getvalue()
