"""The thin ORM layer around ``ratings.algorithms.rating``: read the match log, write the cache.

Invariant that makes replays cheap: ``RatingChange`` rows are only ever appended in game-key
order (an incremental update only appends a game whose key is beyond every rated key; anything
else replays the tail), so the highest id of a subject's changes is its latest state.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal, TypeVar

from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import F, Max, Q

from ratings.algorithms.rating import (
    DEFAULT_PARAMS,
    Change,
    Game,
    GameKey,
    Params,
    Pool,
    Rater,
    Result,
    State,
    Subject,
    affected_games,
    display_rating,
    subjects_of,
)
from ratings.models import RatedMatch, Rating, RatingChange, RatingLock, RatingRun
from ratings.services import shadow
from tournaments.models import LineMember, Match, MatchResult, Outcome

logger = logging.getLogger(__name__)
T = TypeVar("T")

UNRATED_OUTCOMES = (Outcome.FORFEIT, Outcome.BYE)
BATCH = 5000

Progress = Callable[[str, int, int], None]
"""``progress(step, done, total)``: how far a recompute is, for a command's progress bar."""


# --- reading the match log -------------------------------------------------------------------


def result_of(
    *,
    outcome: str,
    home_id: int,
    away_id: int,
    offender_id: int | None,
    winner_id: int | None,
    drawn: bool,
    home_points: int | None,
    away_points: int | None,
) -> Result | None:
    """Who won, as the rating sees it; ``None`` when the match is not rated.

    Timeouts and abandons are losses for the offender whatever the recorded points (seed 000:
    the offender loses the match even when the score still favours it). Forfeits and byes are
    not rated.
    """
    if outcome in UNRATED_OUTCOMES:
        return None
    if outcome in (Outcome.TIMEOUT, Outcome.ABANDON) and offender_id in (home_id, away_id):
        return Result.AWAY if offender_id == home_id else Result.HOME
    if winner_id == home_id:
        return Result.HOME
    if winner_id == away_id:
        return Result.AWAY
    if drawn:
        return Result.DRAW
    if home_points is None or away_points is None:
        return None
    if home_points == away_points:
        return Result.DRAW
    return Result.HOME if home_points > away_points else Result.AWAY


def withheld_match_ids() -> set[int]:
    """The matches whose result the public may not read yet (``tournaments.access.
    withheld_results_anywhere``: the tables of a running duplicate stage that hold a board
    some table has still to play). A rating that moved after one would tell how the board went,
    on the player pages, the rating lists and the seeding alike, so they are not rated until
    the policy shows them (the board opens, or the stage closes); rated meanwhile, they count
    again as out of order. One query when no duplicate stage is running."""
    from tournaments.access import withheld_results_anywhere

    return set(withheld_results_anywhere())


def _rateable(qs):
    """Finished matches between two lines, of tournaments that count toward ratings (public
    ones, and private ones that say so: ``tournaments.access.rated_tournaments_q``), whose
    result the public may read (``withheld_match_ids``)."""
    from tournaments.access import rated_tournaments_q

    rateable = (
        qs.filter(status=Match.Status.DONE, home__isnull=False, away__isnull=False)
        .filter(rated_tournaments_q("round__stage__tournament__"))
        .exclude(outcome__in=UNRATED_OUTCOMES)
        .exclude(outcome="")
    )
    withheld = withheld_match_ids()
    return rateable.exclude(id__in=withheld) if withheld else rateable


_KEY_FIELDS = (
    "id",
    "round__number",
    "round__stage__order",
    "round__stage__tournament_id",
    "round__stage__tournament__start_date",
    "home_id",
    "away_id",
    "outcome",
    "offender_id",
    "winner_id",
)


def _key_filter(start: GameKey) -> Q:
    """Matches whose game key is >= ``start`` (a lexicographic tuple comparison in SQL)."""
    d, t, s, r, m = start
    p = "round__stage__"
    return (
        Q(**{f"{p}tournament__start_date__gt": d})
        | Q(**{f"{p}tournament__start_date": d, f"{p}tournament_id__gt": t})
        | Q(**{f"{p}tournament__start_date": d, f"{p}tournament_id": t, f"{p}order__gt": s})
        | Q(
            **{
                f"{p}tournament__start_date": d,
                f"{p}tournament_id": t,
                f"{p}order": s,
                "round__number__gt": r,
            }
        )
        | Q(
            **{
                f"{p}tournament__start_date": d,
                f"{p}tournament_id": t,
                f"{p}order": s,
                "round__number": r,
                "id__gte": m,
            }
        )
    )


def _change_key_filter(start: GameKey, prefix: str = "") -> Q:
    d, t, s, r, m = start
    f = {
        "d": f"{prefix}played_on",
        "t": f"{prefix}tournament_id_key",
        "s": f"{prefix}stage_order",
        "r": f"{prefix}round_number",
        "m": f"{prefix}match_id",
    }
    return (
        Q(**{f"{f['d']}__gt": d})
        | Q(**{f["d"]: d, f"{f['t']}__gt": t})
        | Q(**{f["d"]: d, f["t"]: t, f"{f['s']}__gt": s})
        | Q(**{f["d"]: d, f["t"]: t, f["s"]: s, f"{f['r']}__gt": r})
        | Q(**{f["d"]: d, f["t"]: t, f["s"]: s, f["r"]: r, f"{f['m']}__gte": m})
    )


def _stream(qs) -> Iterator[tuple]:
    """The rows of a ``values_list`` query, streamed (a server-side cursor on PostgreSQL).

    On PostgreSQL the rows come from a cursor of this module's whose time stamps psycopg
    parses in C: Django's loader for them (a Python subclass, to set the time zone) cost a
    full read more than every other column together. The instants are the same (aware, in
    the connection's time zone); dates and numbers load as Django's cursors load them."""
    if connection.vendor != "postgresql":
        yield from qs.iterator(chunk_size=BATCH)
        return
    from psycopg.types.datetime import TimestamptzLoader  # psycopg swaps in its C loader

    sql, params = qs.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(BATCH):
            yield from rows


def load_games(start: GameKey | None = None, match_ids: Iterable[int] | None = None) -> list[Game]:
    """The rateable games of the log (from ``start`` on, or just ``match_ids``), in key order."""
    return _load_games(start, match_ids)[0]


def _load_games(
    start: GameKey | None = None,
    match_ids: Iterable[int] | None = None,
    progress: Progress | None = None,
) -> tuple[list[Game], dict[int, datetime]]:
    """The games, and each match's ``updated_at`` read in the same query as its key: a change
    committed after this read carries a newer stamp, so it is seen as pending again later.

    ``progress`` hears of the rows read ("reading": matches, then their results), out of the
    rows counted first."""
    qs = _rateable(Match.objects.all())
    if start is not None:
        qs = qs.filter(_key_filter(start))
    if match_ids is not None:
        qs = qs.filter(id__in=list(match_ids))
    res_qs = MatchResult.objects.values_list("match_id", "line_id", "points", "drawn")
    total = done = 0
    if progress is not None:
        # the results of a full read are every result; of a partial one, about two a match
        total = qs.count()
        total += res_qs.count() if start is None and match_ids is None else 2 * total
        progress("reading", 0, total)
    rows = []
    stamps: dict[int, datetime] = {}
    # streamed (a server-side cursor on PostgreSQL, inside the caller's transaction): a full
    # log is read in chunks, not fetched as one result set first
    for row in _stream(qs.values_list(*_KEY_FIELDS, "updated_at")):
        rows.append(row)
        stamps[row[0]] = row[-1]
        done += 1
        if progress is not None and not done % BATCH:
            progress("reading", done, total)
    if not rows:
        if progress is not None:
            progress("reading", total, total)
        return [], stamps
    # each line's points in a match, and the matches where a result says drawn: flat, one
    # entry a result row (a dict a match cost a full read as much as the query's rows)
    points: dict[tuple[int, int], int] = {}
    drawn_ids: set[int] = set()
    line_ids: set[int] = set()
    for r in rows:
        line_ids.update((r[5], r[6]))
    if (start is not None or match_ids is not None) and len(rows) < 20000:
        res_qs = res_qs.filter(match_id__in=[r[0] for r in rows])
    for match_id, line_id, line_points, drawn in _stream(res_qs):
        points[match_id, line_id] = line_points
        if drawn:
            drawn_ids.add(match_id)
        done += 1
        if progress is not None and not done % BATCH:
            progress("reading", min(done, total), total)
    members: dict[int, list[tuple[int, int]]] = defaultdict(list)
    mem_qs = LineMember.objects.values_list("line_id", "position", "player_id")
    if len(line_ids) < 20000:
        mem_qs = mem_qs.filter(line_id__in=line_ids)
    for line_id, position, player_id in _stream(mem_qs):
        members[line_id].append((position, player_id))
    players = {line: tuple(p for _, p in sorted(ms)) for line, ms in members.items()}

    games: list[Game] = []
    append, lookup, line_players = games.append, points.get, players.get
    for mid, rnd, stage, tid, start_date, home, away, outcome, offender, winner, _ in rows:
        result = result_of(
            outcome=outcome,
            home_id=home,
            away_id=away,
            offender_id=offender,
            winner_id=winner,
            drawn=mid in drawn_ids,
            home_points=lookup((mid, home)),
            away_points=lookup((mid, away)),
        )
        hp, ap = line_players(home, ()), line_players(away, ())
        if result is None or not hp or len(hp) != len(ap):
            continue
        append(Game(GameKey(start_date, tid, stage, rnd, mid), hp, ap, result))
    games.sort(key=lambda g: g.key)
    if progress is not None:
        progress("reading", total, total)
    return games, stamps


def fingerprint(game: Game) -> str:
    home = ",".join(map(str, game.home))
    away = ",".join(map(str, game.away))
    return f"{game.result}|{home}|{away}"


# --- writing the cache -----------------------------------------------------------------------


def _subject_of(pool: str, player_id: int, partner_id: int | None) -> Subject:
    return Subject(Pool(pool), player_id, partner_id)


def _state_from(obj, prefix: str = "") -> State:
    return State(
        mu=getattr(obj, f"mu{prefix}"),
        sigma=getattr(obj, f"sigma{prefix}"),
        games=obj.games,
        wins=obj.wins,
        draws=obj.draws,
        losses=obj.losses,
        last_played=obj.last_played if hasattr(obj, "last_played") else obj.played_on,
    )


def _new_run(kind: str, params: Params, reason: str = "", start: GameKey | None = None):
    return RatingRun.objects.create(
        kind=kind,
        reason=reason[:200],
        replay_from=None if start is None else [start[0].isoformat(), *start[1:]],
        model=params.model,
        openskill_version=params.openskill_version,
        mu=params.mu,
        sigma=params.sigma,
        beta=params.beta,
        tau=params.tau,
        params=params.as_dict(),
    )


_CHANGE_COLUMNS = (
    "run_id",
    "match_id",
    "pool",
    "player_id",
    "partner_id",
    "played_on",
    "tournament_id_key",
    "stage_order",
    "round_number",
    "result",
    "mu_before",
    "sigma_before",
    "mu_after",
    "sigma_after",
    "games",
    "wins",
    "draws",
    "losses",
)
_RATED_COLUMNS = (
    "match_id",
    "played_on",
    "tournament_id_key",
    "stage_order",
    "round_number",
    "fingerprint",
    "stamp",
)
_RATING_COLUMNS = (
    "pool",
    "player_id",
    "partner_id",
    "mu",
    "sigma",
    "games",
    "wins",
    "draws",
    "losses",
    "last_played",
    "display",
)


def _adapt(value):
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    if isinstance(value, date):
        return connection.ops.adapt_datefield_value(value)
    return value


def _insert_rows(
    model, columns: tuple[str, ...], rows: Iterable[tuple], table: str | None = None
) -> None:
    """Append plain rows in order: COPY on PostgreSQL, executemany elsewhere.

    Skipping model instances is what keeps a 100,000-match replay within seconds (the profile
    showed ``bulk_create`` spending most of its time building and preparing instances). The
    ``COPY`` is binary, each column's type read from the catalog: floats travel as their eight
    bytes (bit-identical), and psycopg packs a row in a sixth of the CPU text took (a float's
    shortest text cost most of it).
    """
    table = connection.ops.quote_name(table or model._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = %s::regclass "
                "AND attnum > 0 AND NOT attisdropped",
                [table],
            )
            types = dict(cursor.fetchall())
            copy_sql = f"COPY {table} ({cols}) FROM STDIN (FORMAT BINARY)"
            with cursor.cursor.copy(copy_sql) as copy:
                copy.set_types([types[c] for c in columns])
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join(["%s"] * len(columns))
        sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"
        # Dates and times as Django writes them on this database, so that a stamp compares
        # equal to the ``updated_at`` it copies (an ISO text with "T" and an offset did not,
        # on SQLite: every rated match looked pending again).
        rows = [tuple(_adapt(v) for v in r) for r in rows]
        for i in range(0, len(rows), BATCH):
            cursor.executemany(sql, rows[i : i + BATCH])


def _counted(rows: Iterable[T], progress: Callable[[], None] | None) -> Iterator[T]:
    """``rows``, calling ``progress`` after every ``BATCH`` of them."""
    if progress is None:
        yield from rows
        return
    for i, row in enumerate(rows, 1):
        yield row
        if not i % BATCH:
            progress()


def _write_changes(
    run: RatingRun,
    changes: list[Change],
    games: list[Game],
    stamps: dict[int, datetime],
    tables: dict | None = None,
    progress: Callable[[], None] | None = None,
) -> None:
    """The changes and the games' ``RatedMatch`` rows; ``tables`` names other tables to write
    them to (a rebuild's shadows), by model."""
    tables = tables or {}
    run_id = run.pk
    pools = {pool: str(pool) for pool in Pool}
    # the records are named tuples: unpacked, not read field by field (a row per change)
    _insert_rows(
        RatingChange,
        _CHANGE_COLUMNS,
        (
            (
                run_id,
                match_id,
                pools[pool],
                player_id,
                partner_id,
                played_on,
                tournament_id,
                stage_order,
                round_number,
                outcome,
                before.mu,
                before.sigma,
                after.mu,
                after.sigma,
                after.games,
                after.wins,
                after.draws,
                after.losses,
            )
            for (
                (pool, player_id, partner_id),
                (played_on, tournament_id, stage_order, round_number, match_id),
                before,
                after,
                outcome,
            ) in _counted(changes, progress)
        ),
        tables.get(RatingChange),
    )
    _insert_rows(
        RatedMatch,
        _RATED_COLUMNS,
        (
            (
                g.key.match_id,
                g.key.played_on,
                g.key.tournament_id,
                g.key.stage_order,
                g.key.round_number,
                fingerprint(g),
                stamps.get(g.key.match_id),
            )
            for g in _counted(games, progress)
        ),
        tables.get(RatedMatch),
    )


def _rating_row(subject: Subject, st: State, params: Params) -> tuple:
    return (
        str(subject.pool),
        subject.player_id,
        subject.partner_id,
        st.mu,
        st.sigma,
        st.games,
        st.wins,
        st.draws,
        st.losses,
        st.last_played,
        display_rating(st.mu, params),
    )


def _subject_filter(subjects: Iterable[Subject]) -> Q:
    q = Q(pk__in=[])
    by_pool: dict[tuple[str, bool], set[int]] = defaultdict(set)
    pairs: list[Subject] = []
    for s in subjects:
        if s.partner_id is None:
            by_pool[(str(s.pool), False)].add(s.player_id)
        else:
            pairs.append(s)
    for (pool, _), ids in by_pool.items():
        q |= Q(pool=pool, partner__isnull=True, player_id__in=ids)
    for s in pairs:
        q |= Q(pool=str(s.pool), player_id=s.player_id, partner_id=s.partner_id)
    return q


def _delete_ratings(subjects: Iterable[Subject]) -> None:
    """The ``Rating`` rows of ``subjects`` gone: on PostgreSQL one statement joining them as
    arrays (a filter of one term a fixed pair, thousands of them, took a correction's lock
    longest); elsewhere by chunks of filters."""
    listed = list(subjects)
    if not listed:
        return
    if connection.vendor != "postgresql":
        for chunk in _chunks(listed, 500):
            Rating.objects.filter(_subject_filter(chunk)).delete()
        return
    table = connection.ops.quote_name(Rating._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {table} AS r USING unnest(%s::text[], %s::bigint[], %s::bigint[]) "
            "AS s(pool, player_id, partner_id) WHERE r.pool = s.pool "
            "AND r.player_id = s.player_id AND (r.partner_id = s.partner_id "
            "OR (r.partner_id IS NULL AND s.partner_id IS NULL))",
            [
                [str(s.pool) for s in listed],
                [s.player_id for s in listed],
                [s.partner_id for s in listed],
            ],
        )


def _save_ratings(states: dict[Subject, State], params: Params) -> None:
    if not states:
        return
    if Rating.objects.exists():
        _delete_ratings(states)
    _insert_rows(Rating, _RATING_COLUMNS, (_rating_row(s, st, params) for s, st in states.items()))


def _latest_key() -> GameKey | None:
    last = (
        RatedMatch.objects.order_by(
            "-played_on", "-tournament_id_key", "-stage_order", "-round_number", "-match_id"
        )
        .values_list("played_on", "tournament_id_key", "stage_order", "round_number", "match_id")
        .first()
    )
    return GameKey(*last) if last else None


def _lock() -> None:
    """Serialize rating writers (the row comes from migration 0002; ``flush`` may remove it).

    Only writers queue here; pages read the committed cache and never wait."""
    if not RatingLock.objects.select_for_update().filter(id=1).exists():
        RatingLock.objects.get_or_create(id=1)
        RatingLock.objects.select_for_update().get(id=1)


def _try_lock() -> bool:
    """Take the writers' lock if it is free; ``False`` when another writer holds it.

    The rating task never waits on another writer (a worker slot blocked for the length of a
    replay): it leaves, and is asked again a moment later (``ratings.tasks``)."""
    if not connection.features.has_select_for_update_skip_locked:
        _lock()
        return True
    if RatingLock.objects.select_for_update(skip_locked=True).filter(id=1).exists():
        return True
    if RatingLock.objects.filter(id=1).exists():
        return False
    _lock()
    return True


_CACHE = (RatingChange, RatedMatch, Rating)  # the tables a full recompute rewrites


def _empty(*models) -> None:
    """Every row of the cache's tables gone, for a full recompute where tables are not swapped
    (SQLite). ``DELETE`` row by row, not a table emptied at once: pages go on reading the
    committed cache while the recompute runs."""
    for model in models:
        model.objects.all().delete()


def _analyze(*models) -> None:
    """Fresh planner statistics after a bulk rewrite: without them the next rating queries scan
    whole indexes until autovacuum gets there."""
    if connection.vendor != "postgresql":
        return
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


def _finish(run: RatingRun, games: int, started: float) -> RatingRun:
    run.games = games
    run.seconds = time.perf_counter() - started
    run.save(update_fields=["games", "seconds"])
    return run


def _no_progress(step: str, done: int, total: int) -> None:
    pass


def recompute(
    start: GameKey | None = None,
    params: Params = DEFAULT_PARAMS,
    reason: str = "",
    extra_subjects: Iterable[Subject] = (),
    progress: Progress = _no_progress,
) -> RatingRun:
    """Replay the log from ``start`` (or from the beginning) and rewrite the cache from there.

    ``extra_subjects`` are also reset to their last change before ``start``: the players of
    deleted matches, whose changes the deletion already removed. One transaction: the log read
    streamed, the games rated in memory, the cache written by ``COPY`` (``_insert_rows``). A
    full recompute on PostgreSQL writes fresh tables and swaps them in at the end
    (``ratings.services.shadow``): pages read the old ratings until the commit, and wait only
    for the swap. ``progress`` hears of each step ("reading", "rating", "writing", then
    "indexing" and "swapping" or "committing") as it goes; the last ends after the commit.
    """
    started = time.perf_counter()
    rebuild: shadow.Rebuild | None = None
    with transaction.atomic():
        shadow.hold_recompute_lock()
        _lock()
        if start is None:
            run = _new_run(RatingRun.Kind.FULL, params, reason)
            if connection.vendor == "postgresql":
                rebuild = shadow.Rebuild([m._meta.db_table for m in _CACHE], str(run.pk))
                rebuild.create()
            else:
                _empty(*_CACHE)
            rater = Rater(params)
        else:
            run = _new_run(RatingRun.Kind.REPLAY, params, reason, start)
            tail = RatingChange.objects.filter(_change_key_filter(start))
            affected = {
                _subject_of(*row)
                for row in tail.values_list("pool", "player_id", "partner_id").distinct()
            } | set(extra_subjects)
            tail.delete()
            RatedMatch.objects.filter(_change_key_filter(start)).delete()
            # Affected subjects fall back to their last change before ``start`` (or no rating).
            restored = _restore(affected)
            Rating.objects.filter(_subject_filter(affected)).delete()
            _save_ratings(restored, params)
            rater = Rater(params, _load_states())
        games, stamps = _load_games(start, progress=progress)
        changes: list[Change] = []
        progress("rating", 0, len(games))
        for done in range(0, len(games), BATCH):  # the games are in key order already
            changes.extend(rater.replay(games[done : done + BATCH]))
            progress("rating", min(done + BATCH, len(games)), len(games))
        final = {c.subject: rater.states[c.subject] for c in changes}
        rows = len(changes) + len(games) + len(final)
        written = [0]

        def wrote() -> None:
            written[0] = min(written[0] + BATCH, rows)
            progress("writing", written[0], rows)

        progress("writing", 0, rows)
        if rebuild is None:
            _write_changes(run, changes, games, stamps, progress=wrote)
            _save_ratings(final, params)
        else:
            shadows = {m: rebuild.shadow_of(m._meta.db_table) for m in _CACHE}
            _write_changes(run, changes, games, stamps, shadows, wrote)
            _insert_rows(
                Rating,
                _RATING_COLUMNS,
                (_rating_row(s, st, params) for s, st in final.items()),
                shadows[Rating],
            )
        progress("writing", rows, rows)
        if rebuild is not None:
            steps, built = rebuild.steps(), [0]

            def indexed() -> None:
                built[0] += 1
                progress("indexing", built[0], steps)

            progress("indexing", 0, steps)
            rebuild.index(indexed)
            progress("swapping", 0, 1)
            writers, readers = rebuild.swap()
            logger.info(
                "ratings: the fresh tables swapped in; writers of matches and players held "
                "%.3fs, rating pages %.3fs",
                writers,
                readers,
            )
        else:
            progress("committing", 0, 1)
    if rebuild is None:
        _analyze(*_CACHE)  # a rebuild's tables were analyzed before the swap
    progress("swapping" if rebuild is not None else "committing", 1, 1)
    logger.info(
        "ratings %s: %d games in %.2fs", run.kind, len(games), time.perf_counter() - started
    )
    return _finish(run, len(games), started)


def _restore(subjects: set[Subject], upto_run: int | None = None) -> dict[Subject, State]:
    """Each subject's state after its last remaining change (none: it has no rating); with
    ``upto_run``, as the runs up to that one left it (later runs not seen)."""
    restored: dict[Subject, State] = {}
    if not subjects:
        return restored
    listed = list(subjects)
    changes = RatingChange.objects.all()
    if upto_run is not None:
        changes = changes.filter(run_id__lte=upto_run)
    for i in range(0, len(listed), 500):
        last_ids = (
            changes.filter(_subject_filter(listed[i : i + 500]))
            .values("pool", "player_id", "partner_id")
            .annotate(last=Max("id"))
            .values_list("last", flat=True)
        )
        for ch in RatingChange.objects.filter(id__in=list(last_ids)):
            restored[_subject_of(ch.pool, ch.player_id, ch.partner_id)] = _state_from(ch, "_after")
    return restored


def _load_states(subjects: Iterable[Subject] | None = None) -> dict[Subject, State]:
    qs = Rating.objects.all()
    if subjects is not None:
        qs = qs.filter(_subject_filter(subjects))
    return {_subject_of(r.pool, r.player_id, r.partner_id): _state_from(r) for r in qs}


def _key_of(rated: RatedMatch) -> GameKey:
    return GameKey(
        rated.played_on,
        rated.tournament_id_key,
        rated.stage_order,
        rated.round_number,
        rated.match_id,
    )


def _chunks(ids: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    listed = list(ids)
    for i in range(0, len(listed), size):
        yield listed[i : i + size]


# --- which results are still to rate ---------------------------------------------------------


def pending_match_ids(
    limit: int | None = None, since=None, stage_id: int | None = None
) -> list[int]:
    """Matches whose rating is missing or out of date, read from the database alone.

    A rateable match (``_rateable``: the one selection of matches that count) without a
    ``RatedMatch`` row, or whose ``updated_at`` is not the stamp it was rated at; and a rated
    match that no longer counts (result deleted, outcome now unrated). Whatever happened to the
    messages that announced them, these are what ``rate_pending`` rates.

    ``since`` limits the look to matches changed from then on: the cheap question the debounced
    runs ask (a scan of the match table instead of two joins over the whole log); the beat sweep
    asks the full one. A result changed since then can also make rateable the unrated matches
    of its stage (the tables that held a duplicate board it opened, played earlier and withheld
    until now), and a result deleted can withhold again rated tables of its stage (a board
    secret again): those are pending too. ``stage_id`` limits the look to one stage (a duplicate
    stage just closed shows every table).
    """
    every = _rateable(Match.objects.all())
    rateable = every
    rated = RatedMatch.objects.all()
    if stage_id is not None:
        rateable = rateable.filter(round__stage_id=stage_id)
        rated = rated.filter(match__round__stage_id=stage_id)
    if since is not None:
        rateable = rateable.filter(updated_at__gte=since)
        rated = rated.filter(match__updated_at__gte=since)
    unrated_q = Q(rating_entry__isnull=True) | ~Q(rating_entry__stamp=F("updated_at"))
    unrated = rateable.filter(unrated_q).values_list("id", flat=True)
    released = every.none().values_list("id", flat=True)
    hidden = released
    if since is not None:
        changed_stages = Match.objects.filter(updated_at__gte=since).values("round__stage_id")
        released = every.filter(
            round__stage_id__in=changed_stages, rating_entry__isnull=True
        ).values_list("id", flat=True)
        # and the rated tables of those stages that no longer count: a deleted result makes a
        # duplicate board secret again, and withholds the other tables that hold it
        hidden = (
            RatedMatch.objects.filter(match__round__stage_id__in=changed_stages)
            .exclude(match_id__in=every.filter(round__stage_id__in=changed_stages).values("id"))
            .values_list("match_id", flat=True)
        )
    gone = rated.exclude(match_id__in=rateable.values("id")).values_list("match_id", flat=True)
    if limit is not None:
        unrated, released, gone, hidden = (
            unrated[:limit],
            released[:limit],
            gone[:limit],
            hidden[:limit],
        )
    return sorted({*unrated, *released, *gone, *hidden})


def rate_pending(
    match_ids: Iterable[int] | None = None,
    params: Params = DEFAULT_PARAMS,
    limit: int = 20000,
    since=None,
    stage_id: int | None = None,
) -> RatingRun | Literal[False] | None:
    """Bring the cache in line with every pending result (or just ``match_ids``, or those of
    the stage ``stage_id``).

    Results beyond every rated game are appended in one replay; corrections, deletions and
    results that arrive out of order re-rate only the games they change (``affected_games``),
    not the whole tail of the log. Returns the run, ``None`` when nothing changed, or ``False``
    when another writer holds the lock (ask again later).
    """
    started = time.perf_counter()
    # A replay is computed outside the writers' lock when this call owns its transaction (the
    # workers' case); inside a caller's transaction it runs under the lock, as it always did.
    unlocked = connection.vendor == "postgresql" and not connection.in_atomic_block
    replay: tuple[GameKey, set[int]] | None = None
    with transaction.atomic():
        if not _try_lock():
            return False
        ids = (
            pending_match_ids(limit, since, stage_id)
            if match_ids is None
            else sorted(set(match_ids))
        )
        if not ids:
            return None
        games, stamps = _load_games(match_ids=ids)
        by_id = {g.key.match_id: g for g in games}
        existing = {r.match_id: r for r in RatedMatch.objects.filter(match_id__in=ids)}
        unchanged = [
            r
            for mid, r in existing.items()
            if mid in by_id
            and _key_of(r) == by_id[mid].key
            and r.fingerprint == fingerprint(by_id[mid])
        ]
        for r in unchanged:  # touched but the same game: only the stamp moves on
            r.stamp = stamps[r.match_id]
        if unchanged:
            RatedMatch.objects.bulk_update(unchanged, ["stamp"], batch_size=BATCH)
        changed = (set(by_id) | set(existing)) - {r.match_id for r in unchanged}
        if not changed:
            return None
        if changed <= set(by_id) and not changed & set(existing):
            new = sorted((by_id[m] for m in changed), key=lambda g: g.key)
            latest = _latest_key()
            if latest is None or new[0].key > latest:
                return _append(new, stamps, params, started)
        keys = [by_id[m].key for m in changed if m in by_id]
        keys += [_key_of(existing[m]) for m in changed if m in existing]
        if not unlocked:
            return _replay_affected(min(keys), changed, params, started)
        replay = (min(keys), changed)
    run = _replay_outside_lock(*replay, params, started)
    if run is False:  # a recompute is rewriting the cache: ask again once it is done
        return False
    if run is not None:
        return run
    # Other writers kept changing what it read: replay under the lock (they wait, as before).
    with transaction.atomic():
        _lock()
        return rate_pending(match_ids, params, limit, since, stage_id)


def _append(games: list[Game], stamps, params: Params, started: float) -> RatingRun:
    """New results beyond every rated game: rate them on top of the cache, in key order."""
    run = _new_run(RatingRun.Kind.INCREMENTAL, params, f"{len(games)} new results")
    subjects: set[Subject] = set()
    for game in games:
        subjects |= subjects_of(game)
    rater = Rater(params, _load_states(subjects))
    changes = rater.replay(games)
    _write_changes(run, changes, games, stamps)
    _save_ratings({c.subject: rater.states[c.subject] for c in changes}, params)
    return _finish(run, len(games), started)


def _replay_affected(
    start: GameKey, changed: set[int], params: Params, started: float
) -> RatingRun:
    """Re-rate the changed games and every later game their change reaches, nothing else.

    Each subject's changes stay in key order by id (its unaffected history is kept, its
    affected tail is deleted and appended again), which is the invariant ``_restore`` reads.
    """
    run = _new_run(
        RatingRun.Kind.REPLAY, params, f"{len(changed)} results corrected or out of order", start
    )
    tail, stamps = _load_games(start)
    seeds = {
        _subject_of(*row)
        for chunk in _chunks(changed)
        for row in RatingChange.objects.filter(match_id__in=chunk)
        .values_list("pool", "player_id", "partner_id")
        .distinct()
    }
    replay, affected = affected_games(tail, changed, seeds)
    redo = changed | {g.key.match_id for g in replay}
    for chunk in _chunks(redo):
        RatingChange.objects.filter(match_id__in=chunk).delete()
        RatedMatch.objects.filter(match_id__in=chunk).delete()
    restored = _restore(affected)
    rater = Rater(params, restored)
    changes = rater.replay(replay)
    _write_changes(run, changes, replay, stamps)
    final = {s: rater.states[s] for s in affected if s in rater.states}
    _delete_ratings(affected)
    _insert_rows(Rating, _RATING_COLUMNS, (_rating_row(s, st, params) for s, st in final.items()))
    logger.info(
        "ratings: %d changed results re-rated %d of %d later games in %.2fs",
        len(changed),
        len(replay),
        len(tail),
        time.perf_counter() - started,
    )
    return _finish(run, len(replay), started)


# --- replaying outside the writers' lock --------------------------------------------------------
#
# A correction early in a long log re-rates tens of thousands of games (seconds to minutes); the
# lock that serializes writers is held only at the end. The replay is computed from one snapshot
# (REPEATABLE READ) and written in a transaction that takes the lock last, after its own deletes
# and COPYs, so other writers wait only for the check and the ``Rating`` rows. Under the lock the
# runs committed since the snapshot are read: results appended meanwhile (incremental runs) are
# re-rated on top of the new states when they touch an affected player (a short catch-up);
# anything else (another replay, a recompute) means start again.

REPLAY_TRIES = 3
CATCH_UP_PASSES = 3  # before the lock, at most


class _Moved(Exception):
    """Another writer changed what the replay read: roll back and start again."""


def _replay_outside_lock(
    start: GameKey, changed: set[int], params: Params, started: float
) -> RatingRun | Literal[False] | None:
    """The replay of ``_replay_affected`` with the lock held only to finish; ``None`` when other
    writers moved the log ``REPLAY_TRIES`` times running (the caller replays under the lock),
    ``False`` while a recompute runs (``shadow.try_recompute_lock_shared``)."""
    for attempt in range(REPLAY_TRIES):
        try:
            with transaction.atomic():
                if not shadow.try_recompute_lock_shared():
                    return False
                # Every writer makes its run under the lock: a run not visible now is newer.
                seen_run = RatingRun.objects.aggregate(m=Max("id"))["m"] or 0
                tail, stamps = _load_games(start)
                # What the runs up to ``seen_run`` rated (READ COMMITTED: newer runs' rows
                # may show up in these reads, and are left out of them).
                mine = RatingChange.objects.filter(run_id__lte=seen_run)
                rated = set(
                    RatedMatch.objects.filter(_change_key_filter(start)).values_list(
                        "match_id", flat=True
                    )
                ) - set(
                    RatingChange.objects.filter(run_id__gt=seen_run).values_list(
                        "match_id", flat=True
                    )
                )
                # Games no writer has rated yet stay pending (an append may be rating them now).
                tail = [g for g in tail if g.key.match_id in rated or g.key.match_id in changed]
                seeds = {
                    _subject_of(*row)
                    for chunk in _chunks(changed)
                    for row in mine.filter(match_id__in=chunk)
                    .values_list("pool", "player_id", "partner_id")
                    .distinct()
                }
                replay, affected = affected_games(tail, changed, seeds)
                run = _new_run(
                    RatingRun.Kind.REPLAY,
                    params,
                    f"{len(changed)} results corrected or out of order",
                    start,
                )
                for chunk in _chunks(changed | {g.key.match_id for g in replay}):
                    # A newer run's rows stay, for the check under the lock to find.
                    mine.filter(match_id__in=chunk).delete()
                    RatedMatch.objects.filter(match_id__in=chunk).delete()
                rater = Rater(params, _restore(affected, upto_run=seen_run))
                changes = rater.replay(replay)
                _write_changes(run, changes, replay, stamps)
                caught = _CaughtUp(
                    affected=set(affected),
                    final={s: rater.states[s] for s in affected if s in rater.states},
                    last=replay[-1].key if replay else None,
                )
                # What was appended during the replay, caught up before the lock.
                for _ in range(CATCH_UP_PASSES):
                    if not _catch_up(run, seen_run, caught, params):
                        break
                # Django's foreign keys are checked at commit: check the rows written so far
                # now, before the lock (tens of thousands of rows take seconds to check).
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                waited = time.perf_counter()
                _lock()
                _catch_up(run, seen_run, caught, params)  # what was appended since
                _delete_ratings(caught.affected | set(caught.final))
                _insert_rows(
                    Rating,
                    _RATING_COLUMNS,
                    (_rating_row(s, st, params) for s, st in caught.final.items()),
                )
                _finish(run, len(replay), started)
        except (_Moved, IntegrityError, OperationalError) as exc:
            if isinstance(exc, OperationalError) and not _is_deadlock(exc):
                raise
            logger.info("ratings: the log moved during the replay (try %d)", attempt + 1)
            continue
        logger.info(
            "ratings: %d changed results re-rated %d of %d later games in %.2fs "
            "(writers' lock held %.3fs)",
            len(changed),
            len(replay),
            len(tail),
            time.perf_counter() - started,
            time.perf_counter() - waited,
        )
        return run
    return None


def _is_deadlock(exc: Exception) -> bool:
    return getattr(exc.__cause__, "sqlstate", None) == "40P01"


@dataclass
class _CaughtUp:
    """What a replay outside the lock has caught up of the results appended meanwhile."""

    affected: set[Subject]  # the subjects whose states the replay (and catch-up) rewrote
    final: dict[Subject, State]  # their states now
    last: GameKey | None  # the last game rated so far
    runs: set[int] = field(default_factory=set)  # the incremental runs caught up


def _catch_up(run: RatingRun, seen_run: int, caught: _CaughtUp, params: Params) -> int:
    """Re-rate the results appended since the snapshot (by the incremental runs after
    ``seen_run`` not caught up yet) that meet an affected player, on top of the replay's
    states; raise ``_Moved`` for any other change.

    Called before the lock until a pass finds nothing new (most of what was appended during
    a long replay, then during the catch-up), and once under it (what was appended since): the
    writers' lock waits only for the last. Returns how many runs it caught up. The runs
    of other writers get their ids under the lock, so the runs visible before it are every run
    up to the newest one seen: a subject newly reached is restored as those runs left it."""
    newer = dict(
        RatingRun.objects.filter(id__gt=seen_run)
        .exclude(pk=run.pk)
        .exclude(pk__in=caught.runs)
        .values_list("id", "kind")
    )
    if any(kind != RatingRun.Kind.INCREMENTAL for kind in newer.values()):
        raise _Moved
    if not newer:
        return 0
    caught.runs |= set(newer)
    late_ids = set(
        RatingChange.objects.filter(run_id__in=list(newer))
        .values_list("match_id", flat=True)
        .distinct()
    )
    if not late_ids:
        return len(newer)
    late, stamps = _load_games(match_ids=late_ids)
    if caught.last is not None and late and late[0].key < caught.last:
        raise _Moved  # appended before a game rated here: not a tail to catch up
    extra, reached = affected_games(late, set(), caught.affected)
    if not extra:
        return len(newer)
    ids = {g.key.match_id for g in extra}
    RatingChange.objects.filter(match_id__in=ids).delete()
    RatedMatch.objects.filter(match_id__in=ids).delete()
    restored = _restore(reached - caught.affected, upto_run=max(caught.runs))
    rater = Rater(params, {**restored, **caught.final})
    changes = rater.replay(extra)
    _write_changes(run, changes, extra, stamps)
    caught.final.update({s: rater.states[s] for s in reached if s in rater.states})
    caught.affected |= reached
    caught.last = max(extra[-1].key, caught.last) if caught.last else extra[-1].key
    logger.info("ratings: %d results appended during the replay re-rated", len(extra))
    return len(newer)


def update_for_match(match_id: int, params: Params = DEFAULT_PARAMS) -> RatingRun | None:
    """Bring the cache in line with one match's (new, corrected or deleted) result, waiting for
    the writers' lock (``rate_pending`` is what the workers run)."""
    with transaction.atomic():
        _lock()
        result = rate_pending([match_id], params)
    return result if isinstance(result, RatingRun) else None


def key_to_json(key: GameKey) -> list:
    return [key.played_on.isoformat(), *key[1:]]


def key_from_json(data) -> GameKey:
    return GameKey(date.fromisoformat(data[0]), *(int(x) for x in data[1:]))


def rated_scope(**filters) -> tuple[GameKey, list[Subject]] | None:
    """The first rated key and the rated subjects of a scope about to be deleted (a tournament,
    stage or round: ``RatingChange`` field filters), or ``None`` if nothing there was rated."""
    changes = RatingChange.objects.filter(**filters)
    first = (
        changes.order_by(
            "played_on", "tournament_id_key", "stage_order", "round_number", "match_id"
        )
        .values_list("played_on", "tournament_id_key", "stage_order", "round_number", "match_id")
        .first()
    )
    if first is None:
        return None
    subjects = [
        _subject_of(*row)
        for row in changes.values_list("pool", "player_id", "partner_id").distinct()
    ]
    return GameKey(*first), subjects


def start_key_for_date(day: date) -> GameKey:
    """The first possible key on ``day`` (for ``recompute_ratings --from``)."""
    return GameKey(day, 0, -1, -1, 0)
