"""Standings benchmark: a group of 64 lines with every match played, and a 2,048-line stage.

Creates its data in a throwaway test database on the configured ``DATABASE_URL`` (PostgreSQL
recommended) and drops it at the end:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/12 .venv/bin/python bench/standings.py

Results are stored with bulk inserts (VP/MP from ``algorithms.vp.match_score``, as the result
service computes them), except a sample entered through ``results.enter_result`` to time the
real entry path. Prints queries and milliseconds for each measurement.

``enter_result`` runs the ``results_changed`` listeners on commit. With a broker the rating
update is a message for a worker, as in production (nobody consumes it here: use a Redis
database of your own and flush it after); without one (the embedded default) Celery runs it
in the request, and a re-entry over a stored result replays the ratings of the games after it,
so the figure is then mostly the rating's. The script says which it measured.
"""

import argparse
import datetime
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

import logging  # noqa: E402

from django.db import connection, reset_queries  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

logging.disable(logging.INFO)


def build(n_lines, group_size, rng):
    """A tournament with one round-robin stage of ``n_lines / group_size`` groups, all played."""
    from tournaments.algorithms import vp as vp_algo
    from tournaments.models import Match, MatchResult, Outcome, Stage
    from tournaments.services import entries, presets, schedule
    from tournaments.services.vp import vp_table_from_model

    tournament = presets.create_tournament_from_preset(
        "scopa-classica-11",
        name=f"Bench {n_lines}",
        start_date=datetime.date(2026, 1, 1),
        stages=[{"name": "Gironi", "kind": Stage.Kind.ROUND_ROBIN}],
    )
    entries.add_lines(
        tournament,
        [
            entries.LineRow(name=f"L{n_lines}-{i}", players=[(f"P{n_lines}-{i}", "")], row_number=i)
            for i in range(n_lines)
        ],
    )
    stage = tournament.stages.get()
    schedule.create_groups(stage, n_lines // group_size)
    schedule.generate_round_robin(stage)
    table = vp_table_from_model(tournament.vp_table)
    played, rows = [], []
    for match in Match.objects.filter(round__stage=stage).exclude(outcome=Outcome.BYE).iterator():
        home, away = rng.randint(0, 16), rng.randint(0, 16)
        if home < 11 and away < 11:
            home = 11 + rng.randint(0, 4)
        if home == away:
            home += 1
        winner = match.home_id if home > away else match.away_id
        score = vp_algo.match_score(table, abs(home - away))
        for line, points in ((match.home_id, home), (match.away_id, away)):
            won = line == winner
            rows.append(
                MatchResult(
                    match_id=match.pk,
                    line_id=line,
                    points=points,
                    vp=score.vp_winner if won else score.vp_loser,
                    mp=score.mp_winner if won else score.mp_loser,
                    won=won,
                )
            )
        match.winner_id, match.status, match.outcome = winner, Match.Status.DONE, "completed"
        played.append(match)
    Match.objects.bulk_update(played, ["winner", "status", "outcome"], batch_size=2000)
    MatchResult.objects.bulk_create(rows, batch_size=2000)
    return tournament, stage, len(played)


def timed(fn, repeat):
    times, queries = [], 0
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            fn()
            times.append((time.perf_counter() - started) * 1000)
        queries = len(captured)
    return queries, statistics.median(times), f"{min(times):.2f}–{max(times):.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--lines", type=int, default=2048)
    parser.add_argument("--group-size", type=int, default=16)
    parser.add_argument("--sample-entries", type=int, default=100)
    args = parser.parse_args()

    from tournaments.models import Group, Match, Outcome
    from tournaments.services import results, standings

    rng = random.Random(2026)
    old_name = connection.settings_dict["NAME"]
    print(f"database: {connection.vendor}, throwaway copy of {old_name}")
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        started = time.perf_counter()
        _t64, stage64, matches64 = build(64, 64, rng)
        built64 = time.perf_counter() - started
        group64 = Group.objects.select_related("stage__tournament").get(stage=stage64)
        q, median, spread = timed(lambda: standings.group_table(group64), args.repeat)
        print(f"group of 64 lines, {matches64} matches (built in {built64:.1f} s):")
        print(
            f"  group_table (standings + head-to-head): {q} queries, {median:.1f} ms median "
            f"({spread})"
        )

        started = time.perf_counter()
        _t, stage, matches = build(args.lines, args.group_size, rng)
        built = time.perf_counter() - started
        n_groups = args.lines // args.group_size
        print(
            f"tournament of {args.lines} lines: {n_groups} groups of {args.group_size}, "
            f"{matches} matches (built in {built:.1f} s):"
        )
        q, median, spread = timed(lambda: standings.stage_tables(stage), args.repeat)
        print(f"  stage_tables (all groups): {q} queries, {median:.1f} ms median ({spread})")
        groups = list(Group.objects.filter(stage=stage).select_related("stage__tournament"))
        q, median, spread = timed(lambda: standings.group_table(groups[0]), args.repeat)
        print(f"  one group's table: {q} queries, {median:.2f} ms median ({spread})")

        if args.sample_entries:
            sample = list(
                Match.objects.filter(round__stage=stage)
                .exclude(outcome=Outcome.BYE)
                .order_by("id")[: args.sample_entries]
            )
            deals = [
                {"points": [4, 1], "breakdown": [{"scope": 1, "carte": 1, "denari": 1,
                                                  "primiera": 1}, {"settebello": 1}]},
                {"points": [3, 2], "breakdown": [{"scope": 3}, {"scope": 2}]},
                {"points": [4, 0], "breakdown": [{"scope": 4}, {}]},
            ]  # fmt: skip
            reset_queries()
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                for match in sample:
                    results.enter_result(match, deals)
                elapsed = (time.perf_counter() - started) * 1000
            from django.conf import settings

            rating = (
                "the rating run in the request (no broker: Celery runs tasks eagerly)"
                if settings.CELERY_TASK_ALWAYS_EAGER
                else "the rating queued to the broker"
            )
            print(
                f"  enter_result (re-entry over a stored result, with {rating}), "
                f"{len(sample)} matches: "
                f"{len(captured) / len(sample):.0f} queries and "
                f"{elapsed / len(sample):.2f} ms per match"
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    print(f"dropped {test_name}")


if __name__ == "__main__":
    main()
