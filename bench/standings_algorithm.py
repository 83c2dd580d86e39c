"""Time the pure standings algorithm (no database): ``python bench/standings_algorithm.py``.

Three cases: one group of 64 lines with every match played (2,016 matches), a tournament of
2,048 lines in 128 groups of 16 (single round robin), and one pool of 2,048 lines with 6,144
random matches. Every tie-break is switched on, lots last.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments.algorithms.round_robin import berger_rounds
from tournaments.algorithms.standings import PlayedMatch, TieBreak, rank_group
from tournaments.algorithms.vp import MatchScore, Outcome, load_tables, match_score

TABLE = load_tables()["points-11"]
TIEBREAKS = list(TieBreak)


def played(rng: random.Random, home: int, away: int) -> PlayedMatch[int]:
    home_points, away_points = rng.randint(0, 16), rng.randint(0, 16)
    points = (home_points, away_points)
    if home_points == away_points:
        return PlayedMatch.from_score(home, away, points, MatchScore(10, 10, 0, 0), winner=None)
    score = match_score(TABLE, abs(home_points - away_points), Outcome.COMPLETED)
    winner = home if home_points > away_points else away
    return PlayedMatch.from_score(home, away, points, score, winner=winner)


def round_robin_group(rng: random.Random, first_id: int, n: int) -> tuple[list[int], list]:
    ids = list(range(first_id, first_id + n))
    matches = [
        played(rng, ids[home - 1], ids[away - 1])
        for round_ in berger_rounds(n)
        for home, away in round_
        if away is not None
    ]
    return ids, matches


def timed(label: str, groups: list[tuple[list[int], list]]) -> None:
    n_lines = sum(len(ids) for ids, _ in groups)
    n_matches = sum(len(matches) for _, matches in groups)
    times = []
    for _ in range(5):  # CPU time of this process: the machine may be shared
        start = time.process_time()
        for ids, matches in groups:
            rank_group(ids, matches, TIEBREAKS, lots_seed=42, ratings={i: i % 97 for i in ids})
        times.append((time.process_time() - start) * 1000)
    print(
        f"{label}: {n_lines} lines, {n_matches} matches, {statistics.median(times):.1f} ms CPU "
        f"median of 5 ({min(times):.1f}–{max(times):.1f})"
    )


def main() -> None:
    rng = random.Random(2026)
    timed("one group of 64, all played", [round_robin_group(rng, 1, 64)])
    timed(
        "2,048 lines in 128 groups of 16",
        [round_robin_group(rng, 1 + 16 * g, 16) for g in range(128)],
    )
    ids = list(range(1, 2049))
    pool = [played(rng, *rng.sample(ids, 2)) for _ in range(3 * 2048)]
    timed("one pool of 2,048 lines, random matches", [(ids, pool)])


if __name__ == "__main__":
    main()
