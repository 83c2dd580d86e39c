"""Benchmark: a first-day correction at scale, and how long another rating update waits.

Usage (on a throw-away database whose name contains "bench"; ``bench/ratings.py`` fills it):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_ratings_bench \\
        .venv/bin/python bench/ratings.py --matches 100000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_ratings_bench \\
        .venv/bin/python bench/rating_correction.py

With every game rated, the result of the log's first match is reversed (as a correction would)
and ``rate_pending`` re-rates what it reaches: the time is reported with the number of games
re-rated. Meanwhile a second process (another worker, as in production) stores a new result at
the end of the log every 50 ms and asks ``rate_pending`` for it, retrying every 20 ms while the
writer's lock is taken (what the debounced task does): the longest time from a new result to
its rating is the wait the correction imposed on other updates. (A thread of this process, as
this bench used before, waits for the interpreter's lock behind the replay's arithmetic at each
of its queries: that, not the correction's lock, made most of its waits.)
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.db import connection, connections  # noqa: E402

from bench.machine import load_average  # noqa: E402
from ratings.models import RatedMatch  # noqa: E402
from ratings.services.ratings import pending_match_ids, rate_pending  # noqa: E402
from tournaments.models import Match, MatchResult, Round  # noqa: E402


def reverse(match: Match) -> None:
    """Swap the winner and the points: a correction of the result."""
    results = list(MatchResult.objects.filter(match=match))
    points = [r.points for r in results]
    for r, p in zip(results, reversed(points), strict=True):
        r.points = p
        r.won = not r.won and not r.drawn
        r.save()
    if match.winner_id is not None:
        match.winner_id = match.away_id if match.winner_id == match.home_id else match.home_id
    match.save()


def other_updates(stop, waits) -> None:
    """New results at the end of the log, each rated as soon as the lock lets it."""
    last = Match.objects.order_by("-round__stage__tournament__start_date", "-id").first()
    rnd = Round.objects.get(pk=last.round_id)
    template = list(MatchResult.objects.filter(match=last))
    while not stop.is_set():
        m = Match.objects.create(
            round=rnd,
            home_id=last.home_id,
            away_id=last.away_id,
            status="done",
            outcome="completed",
            winner_id=last.winner_id,
        )
        for r in template:
            MatchResult.objects.create(
                match=m,
                line_id=r.line_id,
                points=r.points,
                mp=r.mp,
                vp=r.vp,
                won=r.won,
                drawn=r.drawn,
            )
        made = time.perf_counter()
        while rate_pending(match_ids=[m.id]) is False:
            time.sleep(0.02)
        waits.append(time.perf_counter() - made)
        time.sleep(0.05)
    connections.close_all()


class LockHeld(logging.Handler):
    """The writers' lock time the correction logs."""

    def __init__(self):
        super().__init__()
        self.held: list[float] = []

    def emit(self, record):
        if "writers' lock held" in str(record.msg):
            self.held.append(float(record.args[-1]))


def main() -> None:
    name = connection.settings_dict["NAME"]
    if "bench" not in str(name):
        sys.exit(f"refusing to write to database {name!r}: its name must contain 'bench'")
    if pending_match_ids():
        print("rating what is pending first ...")
        rate_pending(limit=10**7)
    total = RatedMatch.objects.count()
    first = Match.objects.order_by("round__stage__tournament__start_date", "id").first()
    print(f"{total} rated games; correcting match {first.pk} of {first.round.stage.tournament}")
    reverse(first)
    held = LockHeld()
    logging.getLogger("ratings.services.ratings").addHandler(held)
    context = multiprocessing.get_context("fork")
    stop, waits = context.Event(), context.Manager().list()
    connections.close_all()  # the child opens its own
    other = context.Process(target=other_updates, args=(stop, waits))
    other.start()
    time.sleep(0.3)  # the other writer is running
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    while (run := rate_pending(match_ids=[first.pk])) is False:
        time.sleep(0.02)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    time.sleep(0.5)
    stop.set()
    other.join()
    waits = list(waits)
    print(
        f"correction re-rated {run.games} of {total} games in {elapsed:.2f}s wall "
        f"({cpu:.2f}s CPU of this process); writers' lock held "
        f"{', '.join(f'{h:.3f}s' for h in held.held)}; {load_average()}"
    )
    if waits:
        print(
            f"other updates: {len(waits)} new results, longest wait for its rating "
            f"{max(waits):.2f}s, median {sorted(waits)[len(waits) // 2]:.3f}s"
        )
    reverse(first)  # put it back, so the bench can run again on the same data
    rate_pending(limit=10**7)


if __name__ == "__main__":
    main()
