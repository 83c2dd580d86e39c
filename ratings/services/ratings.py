"""The thin ORM layer around ``ratings.algorithms.rating``: read the match log, write the cache.

Invariant that makes replays cheap: ``RatingChange`` rows are only ever appended in game-key
order (an incremental update only appends a game whose key is beyond every rated key; anything
else replays the tail), so the highest id of a subject's changes is its latest state.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from datetime import date

from django.db import connection, transaction
from django.db.models import Max, Q

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
    display_rating,
    pools_for,
    teams_for,
)
from ratings.models import RatedMatch, Rating, RatingChange, RatingLock, RatingRun
from tournaments.models import LineMember, Match, MatchResult, Outcome

logger = logging.getLogger(__name__)

UNRATED_OUTCOMES = (Outcome.FORFEIT, Outcome.BYE)
BATCH = 5000


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


def _rateable(qs):
    return (
        qs.filter(status=Match.Status.DONE, home__isnull=False, away__isnull=False)
        .exclude(outcome__in=UNRATED_OUTCOMES)
        .exclude(outcome="")
    )


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


def load_games(start: GameKey | None = None, match_ids: Iterable[int] | None = None) -> list[Game]:
    """The rateable games of the log (from ``start`` on, or just ``match_ids``), in key order."""
    qs = _rateable(Match.objects.all())
    if start is not None:
        qs = qs.filter(_key_filter(start))
    if match_ids is not None:
        qs = qs.filter(id__in=list(match_ids))
    rows = list(qs.values_list(*_KEY_FIELDS))
    if not rows:
        return []
    ids = [r[0] for r in rows]
    results: dict[int, dict[int, tuple[int, bool]]] = defaultdict(dict)
    line_ids: set[int] = set()
    for r in rows:
        line_ids.update((r[5], r[6]))
    res_qs = MatchResult.objects.values_list("match_id", "line_id", "points", "drawn")
    if start is not None or match_ids is not None:
        res_qs = res_qs.filter(match_id__in=ids) if len(ids) < 20000 else res_qs
    for match_id, line_id, points, drawn in res_qs.iterator(chunk_size=BATCH):
        results[match_id][line_id] = (points, drawn)
    members: dict[int, list[tuple[int, int]]] = defaultdict(list)
    mem_qs = LineMember.objects.values_list("line_id", "position", "player_id")
    if len(line_ids) < 20000:
        mem_qs = mem_qs.filter(line_id__in=line_ids)
    for line_id, position, player_id in mem_qs.iterator(chunk_size=BATCH):
        members[line_id].append((position, player_id))
    players = {line: tuple(p for _, p in sorted(ms)) for line, ms in members.items()}

    games = []
    for mid, rnd, stage, tid, start_date, home, away, outcome, offender, winner in rows:
        res = results.get(mid, {})
        home_res, away_res = res.get(home), res.get(away)
        result = result_of(
            outcome=outcome,
            home_id=home,
            away_id=away,
            offender_id=offender,
            winner_id=winner,
            drawn=any(d for _, d in res.values()),
            home_points=home_res[0] if home_res else None,
            away_points=away_res[0] if away_res else None,
        )
        hp, ap = players.get(home, ()), players.get(away, ())
        if result is None or not hp or len(hp) != len(ap):
            continue
        games.append(Game(GameKey(start_date, tid, stage, rnd, mid), hp, ap, result))
    games.sort(key=lambda g: g.key)
    return games


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


def _insert_rows(model, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """Append plain rows in order: COPY on PostgreSQL, executemany elsewhere.

    Skipping model instances is what keeps a 100,000-match replay within seconds (the profile
    showed ``bulk_create`` spending most of its time building and preparing instances). Floats
    travel as their shortest exact text, so they read back bit-identical.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join(["%s"] * len(columns))
        sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"
        rows = [tuple(v.isoformat() if isinstance(v, date) else v for v in r) for r in rows]
        for i in range(0, len(rows), BATCH):
            cursor.executemany(sql, rows[i : i + BATCH])


def _write_changes(run: RatingRun, changes: list[Change], games: list[Game]) -> None:
    _insert_rows(
        RatingChange,
        _CHANGE_COLUMNS,
        (
            (
                run.pk,
                c.key.match_id,
                str(c.subject.pool),
                c.subject.player_id,
                c.subject.partner_id,
                c.key.played_on,
                c.key.tournament_id,
                c.key.stage_order,
                c.key.round_number,
                c.outcome,
                c.before.mu,
                c.before.sigma,
                c.after.mu,
                c.after.sigma,
                c.after.games,
                c.after.wins,
                c.after.draws,
                c.after.losses,
            )
            for c in changes
        ),
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
            )
            for g in games
        ),
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


def _save_ratings(states: dict[Subject, State], params: Params) -> None:
    if not states:
        return
    subjects = list(states)
    for i in range(0, len(subjects), 500):
        chunk = subjects[i : i + 500]
        if Rating.objects.exists():
            Rating.objects.filter(_subject_filter(chunk)).delete()
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
    """Serialize rating writers (the row comes from migration 0002; ``flush`` may remove it)."""
    if not RatingLock.objects.select_for_update().filter(id=1).exists():
        RatingLock.objects.get_or_create(id=1)
        RatingLock.objects.select_for_update().get(id=1)


def _finish(run: RatingRun, games: int, started: float) -> RatingRun:
    run.games = games
    run.seconds = time.perf_counter() - started
    run.save(update_fields=["games", "seconds"])
    return run


def recompute(
    start: GameKey | None = None,
    params: Params = DEFAULT_PARAMS,
    reason: str = "",
    extra_subjects: Iterable[Subject] = (),
) -> RatingRun:
    """Replay the log from ``start`` (or from the beginning) and rewrite the cache from there.

    ``extra_subjects`` are also reset to their last change before ``start``: the players of
    deleted matches, whose changes the deletion already removed.
    """
    started = time.perf_counter()
    with transaction.atomic():
        _lock()
        if start is None:
            run = _new_run(RatingRun.Kind.FULL, params, reason)
            RatingChange.objects.all().delete()
            RatedMatch.objects.all().delete()
            Rating.objects.all().delete()
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
            restored: dict[Subject, State] = {}
            if affected:
                last_ids = (
                    RatingChange.objects.filter(_subject_filter(affected))
                    .values("pool", "player_id", "partner_id")
                    .annotate(last=Max("id"))
                    .values_list("last", flat=True)
                )
                for ch in RatingChange.objects.filter(id__in=list(last_ids)):
                    restored[_subject_of(ch.pool, ch.player_id, ch.partner_id)] = _state_from(
                        ch, "_after"
                    )
                Rating.objects.filter(_subject_filter(affected)).delete()
                _save_ratings(restored, params)
            rater = Rater(params, _load_states())
        games = load_games(start)
        changes = rater.replay(games)
        _write_changes(run, changes, games)
        touched = {c.subject for c in changes}
        _save_ratings({s: rater.states[s] for s in touched}, params)
    logger.info(
        "ratings %s: %d games in %.2fs", run.kind, len(games), time.perf_counter() - started
    )
    return _finish(run, len(games), started)


def _load_states(subjects: Iterable[Subject] | None = None) -> dict[Subject, State]:
    qs = Rating.objects.all()
    if subjects is not None:
        qs = qs.filter(_subject_filter(subjects))
    return {_subject_of(r.pool, r.player_id, r.partner_id): _state_from(r) for r in qs}


def update_for_match(match_id: int, params: Params = DEFAULT_PARAMS) -> RatingRun | None:
    """Bring the cache in line with one match's (new, corrected or deleted) result.

    A new result beyond every rated game is applied incrementally; a correction, a deletion or a
    result arriving out of order replays the log from the earliest key involved.
    """
    started = time.perf_counter()
    with transaction.atomic():
        _lock()
        games = load_games(match_ids=[match_id])
        game = games[0] if games else None
        existing = RatedMatch.objects.filter(match_id=match_id).first()
        old_key = (
            GameKey(
                existing.played_on,
                existing.tournament_id_key,
                existing.stage_order,
                existing.round_number,
                existing.match_id,
            )
            if existing
            else None
        )
        if existing is None and game is None:
            return None
        if existing and game and old_key == game.key and existing.fingerprint == fingerprint(game):
            return None
        latest = _latest_key()
        if existing is None and game is not None and (latest is None or game.key > latest):
            run = _new_run(RatingRun.Kind.INCREMENTAL, params, f"match {match_id}")
            subjects = set()
            for pool in pools_for(len(game.home)):
                home, away = teams_for(game, pool)
                subjects.update(home + away)
            rater = Rater(params, _load_states(subjects))
            changes = rater.apply(game)
            _write_changes(run, changes, [game])
            _save_ratings({c.subject: rater.states[c.subject] for c in changes}, params)
            return _finish(run, 1, started)
    start = min(k for k in (old_key, game.key if game else None) if k is not None)
    return recompute(start, params, reason=f"match {match_id} corrected or out of order")


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
