"""Benchmark: full rating recompute of 100,000 simulated matches (singles and pairs), with writes.

Usage (on a throw-away database whose name contains "bench"; it is emptied first):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_ratings_bench \\
        .venv/bin/python bench/ratings.py [--matches 100000] [--pairs-share 0.3] [--profile]

Matches are written straight as Match/MatchResult rows (the benchmark measures the rating
recompute, not the card simulator). Hidden "true" skills decide the results, so the script also
reports how calibrated openskill's ``predict_win`` is on this data.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import os
import pstats
import random
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from bench.machine import load_average  # noqa: E402
from ratings.algorithms.calibration import Calibration, measure  # noqa: E402
from ratings.algorithms.rating import (  # noqa: E402
    DEFAULT_PARAMS,
    openskill_predict_win,
    win_probability,
)
from ratings.models import RatedMatch, Rating, RatingChange, RatingRun  # noqa: E402
from ratings.services.ratings import load_games, recompute  # noqa: E402
from tournaments.models import (  # noqa: E402
    Line,
    LineMember,
    Match,
    MatchResult,
    Player,
    Round,
    Stage,
    Tournament,
    VPTable,
)

BETA = DEFAULT_PARAMS.beta


def wipe() -> None:
    for model in (RatingChange, RatedMatch, Rating, RatingRun, MatchResult):
        model.objects.all().delete()
    Match.objects.all().delete()
    Tournament.objects.all().delete()
    LineMember.objects.all().delete()
    Line.objects.all().delete()
    Player.objects.all().delete()


def generate(n_matches: int, pairs_share: float, seed: int) -> dict:
    """Players with hidden skills, tournaments of 8 rounds; a match's winner drawn from skills."""
    rng = random.Random(seed)
    n_players = max(200, n_matches // 50)
    table, _ = VPTable.objects.get_or_create(slug="bench-11", defaults={"name": "bench"})
    players = Player.objects.bulk_create(
        Player(name=f"Bench {i:06d}", federation_id=f"B{i:06d}") for i in range(n_players)
    )
    skill = {p.id: rng.gauss(25.0, 6.0) for p in players}
    ids = [p.id for p in players]

    singles_lines = Line.objects.bulk_create(Line(name=f"S{pid}") for pid in ids)
    LineMember.objects.bulk_create(
        LineMember(line=line, player_id=pid, position=0)
        for line, pid in zip(singles_lines, ids, strict=True)
    )
    shuffled = ids[:]
    rng.shuffle(shuffled)
    pair_players = [tuple(shuffled[i : i + 2]) for i in range(0, len(shuffled) - 1, 2)]
    pair_lines = Line.objects.bulk_create(Line(name=f"P{a}-{b}") for a, b in pair_players)
    LineMember.objects.bulk_create(
        LineMember(line=line, player_id=pid, position=pos)
        for line, pp in zip(pair_lines, pair_players, strict=True)
        for pos, pid in enumerate(pp)
    )
    lines = {1: [(line.id, (pid,)) for line, pid in zip(singles_lines, ids, strict=True)]}
    lines[2] = [(line.id, pp) for line, pp in zip(pair_lines, pair_players, strict=True)]

    made = 0
    day = date(2020, 1, 4)
    tno = 0
    results = []
    outcomes = []
    while made < n_matches:
        seats = 2 if rng.random() < pairs_share else 1
        pool = lines[seats]
        tno += 1
        size = min(len(pool) // 2 * 2, 64)
        t = Tournament.objects.create(
            slug=f"bench-{tno}",
            name=f"Bench {tno}",
            start_date=day,
            seats_per_line=seats,
            vp_table=table,
        )
        day += timedelta(days=rng.choice((3, 4, 7)))
        stage = Stage.objects.create(tournament=t, order=1, name="RR", kind="round_robin")
        entrants = rng.sample(pool, size)
        rounds = Round.objects.bulk_create(Round(stage=stage, number=n + 1) for n in range(8))
        batch = []
        for rnd in rounds:
            rng.shuffle(entrants)
            for i in range(0, size, 2):
                if made + len(batch) >= n_matches:
                    break
                (h, hp), (a, ap) = entrants[i], entrants[i + 1]
                diff = sum(skill[p] for p in hp) - sum(skill[p] for p in ap)
                perf = diff + rng.gauss(0.0, BETA * math.sqrt(2 * seats))
                drawn = abs(perf) < 0.35
                win = None if drawn else (h if perf > 0 else a)
                batch.append(
                    Match(
                        round=rnd,
                        home_id=h,
                        away_id=a,
                        status="done",
                        outcome="completed",
                        winner_id=win,
                    )
                )
                outcomes.append((hp, ap, drawn, perf > 0))
        made += len(batch)
        created = Match.objects.bulk_create(batch)
        for m in created:
            drawn = m.winner_id is None
            for line, won in (
                (m.home_id, m.winner_id == m.home_id),
                (m.away_id, m.winner_id == m.away_id),
            ):
                results.append(
                    MatchResult(
                        match_id=m.id,
                        line_id=line,
                        points=11 if won else (8 if drawn else 6),
                        mp=0 if drawn else (5 if won else -5),
                        vp=10 if drawn else (15 if won else 5),
                        won=won,
                        drawn=drawn,
                    )
                )
        if len(results) > 20000:
            MatchResult.objects.bulk_create(results, batch_size=5000)
            results = []
    MatchResult.objects.bulk_create(results, batch_size=5000)
    return {"players": n_players, "tournaments": tno, "matches": made}


def calibration() -> dict[str, Calibration]:
    """Predicted P(home wins) before each game of the log vs what happened (a draw counts ½)."""
    games = load_games()
    return {
        "displayed (PlackettLuce logistic)": measure(
            games, lambda h, a, on: win_probability(h, a, on)[0]
        ),
        "openskill predict_win": measure(
            games, lambda h, a, on: openskill_predict_win(h, a, on)[0]
        ),
    }


def backend_cpu() -> float:
    """CPU seconds of the PostgreSQL backend serving this connection (same machine: /proc)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def openskill_alone(games) -> tuple[float, float]:
    """openskill's own time for the same games, in memory, as this run reads them: each game
    rated in each of its pools by ``PlackettLuce.rate`` from a dict of its ratings, nothing
    else (no widening for inactivity, no change records). Returns (wall, CPU) in seconds: what
    a recompute is measured against, in the same run on the same machine."""
    from openskill.models import PlackettLuce

    from ratings.algorithms.rating import _RANKS, pools_for, teams_for

    model = PlackettLuce(
        mu=DEFAULT_PARAMS.mu, sigma=DEFAULT_PARAMS.sigma, beta=BETA, tau=DEFAULT_PARAMS.tau
    )
    t0, cpu0 = time.perf_counter(), time.process_time()
    ratings: dict = {}
    for game in games:
        for pool in pools_for(len(game.home)):
            home, away = teams_for(game, pool)
            teams = [
                [ratings.get(s) or model.rating() for s in home],
                [ratings.get(s) or model.rating() for s in away],
            ]
            rated = model.rate(teams, ranks=_RANKS[game.result])
            for subjects, new in zip((home, away), rated, strict=True):
                ratings.update(zip(subjects, new, strict=True))
    return time.perf_counter() - t0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--pairs-share", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="keep the generated matches")
    parser.add_argument(
        "--no-calibration", action="store_true", help="the recompute and openskill only"
    )
    args = parser.parse_args()

    name = connection.settings_dict["NAME"]
    if "bench" not in str(name):
        sys.exit(f"refusing to empty database {name!r}: its name must contain 'bench'")
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor} {name}")
    if not args.reuse or not Match.objects.exists():
        t0 = time.perf_counter()
        with transaction.atomic():
            wipe()
            info = generate(args.matches, args.pairs_share, args.seed)
        print(f"generated {info} in {time.perf_counter() - t0:.1f}s")

    profiler = cProfile.Profile() if args.profile else None
    pg0 = backend_cpu()
    t0, cpu0 = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    run = recompute(reason="bench")
    if profiler:
        profiler.disable()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    pg_cpu = backend_cpu() - pg0
    changes = RatingChange.objects.count()
    ratings = Rating.objects.count()
    print(
        f"full recompute: {run.games} games, {changes} rating changes, {ratings} ratings "
        f"written in {elapsed:.2f}s ({run.games / elapsed:,.0f} games/s); CPU of this process "
        f"{cpu:.2f}s, of its PostgreSQL backend {pg_cpu:.2f}s; {load_average()}"
    )
    alone, alone_cpu = openskill_alone(load_games())
    print(
        f"openskill alone, the same {run.games} games in memory: {alone:.2f}s "
        f"(CPU {alone_cpu:.2f}s); the recompute takes {elapsed / alone:.2f} times as long "
        f"(CPU {cpu / alone_cpu:.2f} times, {(cpu + pg_cpu) / alone_cpu:.2f} with "
        f"PostgreSQL's); {load_average()}"
    )
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())

    for name, cal in ({} if args.no_calibration else calibration()).items():
        print(f"calibration of {name} over {cal.games} games:")
        print("  predicted  observed  games")
        for p, o, c in cal.bins:
            print(f"  {p:9.3f}  {o:8.3f}  {c:6d}")
        print(f"  Brier score {cal.brier:.4f}, expected calibration error {cal.ece:.4f}")


if __name__ == "__main__":
    main()
