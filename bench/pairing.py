"""Time to pair the next Danish and Swiss round after 7 played rounds (CPU time).

Plays 7 rounds with random VP results through the pairing algorithms themselves (Danish:
``tournaments.algorithms.danish``; Swiss: ``tournaments.algorithms.swiss`` over the
``caissify-pairings`` FIDE Dutch engine), then times the pairing of round 8. No database: this
is the cost of the algorithm, which is what grows with the field; the service around it reads
the standings in a fixed number of queries.

    .venv/bin/python bench/pairing.py [--lines 100 500 2000] [--swiss-lines 40 100] [--runs 3]

Swiss is measured on its own (smaller) sizes: the library runs repeated maximum-weight
matchings over the whole field in pure Python, see ``docs/performance.md``. They go through
``tournaments.algorithms.blossom`` as in the service; ``--swiss-networkx 100`` times those sizes
with networkx's own matcher (the library as installed), for comparison.
``--swiss-weights 20 40`` reports, for those sizes, how many matchings the library runs over 7
rounds and how wide (in bits) the edge weights it gives them are: a compiled matcher must take
integers that wide to give the same pairings.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments.algorithms import blossom, danish, swiss

ROUNDS_PLAYED = 7
BYE_VP = 12


def _danish_history(n_lines: int, seed: int):
    rng = random.Random(seed)
    order = list(range(1, n_lines + 1))
    met: set[frozenset[int]] = set()
    byes: dict[int, int] = {}
    score = dict.fromkeys(order, 0)
    for _round in range(ROUNDS_PLAYED):
        pairing = danish.pair_danish(order, met, byes)
        for a, b in pairing.pairs:
            met.add(frozenset((a, b)))
            vp = rng.randint(0, 20)
            score[a] += vp
            score[b] += 20 - vp
        if pairing.bye is not None:
            byes[pairing.bye] = byes.get(pairing.bye, 0) + 1
            score[pairing.bye] += BYE_VP
        order = sorted(order, key=lambda line: (-score[line], line))
    return order, met, byes


def _swiss_history(n_lines: int, seed: int):
    rng = random.Random(seed)
    start = list(range(1, n_lines + 1))
    rounds: list[swiss.PlayedRound] = []
    for number in range(1, ROUNDS_PLAYED + 1):
        lines, played = swiss.line_histories(start, rounds)
        pairing = swiss.pair_swiss(
            lines, played, round_number=number, total_rounds=ROUNDS_PLAYED + 1, bye_score=BYE_VP
        )
        vp: dict[int, float] = {}
        for home, away in pairing.pairs:
            won = rng.randint(0, 20)
            vp[home], vp[away] = won, 20 - won
        byes = [pairing.bye] if pairing.bye is not None else []
        for line in byes:
            vp[line] = BYE_VP
        rounds.append(swiss.PlayedRound(pairs=pairing.pairs, byes=byes, vp=vp))
    return start, rounds


def _swiss_weights(n_lines: int) -> tuple[int, int]:
    """(matchings run, widest edge weight in bits) while pairing 7 Swiss rounds."""
    original = blossom.max_weight_matching
    seen = {"calls": 0, "bits": 0}

    def spy(adjacency, maxcardinality=False, weight="weight"):
        seen["calls"] += 1
        widths = [
            int(data.get(weight, 1)).bit_length()
            for row in adjacency.values()
            for data in row.values()
        ]
        seen["bits"] = max([seen["bits"], *widths])
        return original(adjacency, maxcardinality, weight)

    blossom.max_weight_matching = spy  # swiss looks it up at each call
    try:
        _swiss_history(n_lines, seed=0)
    finally:
        blossom.max_weight_matching = original
    return seen["calls"], seen["bits"]


def _cpu(func) -> float:
    started = time.process_time()
    func()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="*", default=[100, 500, 2000])
    parser.add_argument("--swiss-lines", type=int, nargs="*", default=[40, 100])
    parser.add_argument("--matching-lines", type=int, nargs="*", default=[100, 500])
    parser.add_argument("--swiss-networkx", type=int, nargs="*", default=[])
    parser.add_argument("--swiss-weights", type=int, nargs="*", default=[])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    print(f"pairing round {ROUNDS_PLAYED + 1} after {ROUNDS_PLAYED} rounds; CPU seconds")
    for n_lines in args.lines:
        times = []
        for run in range(args.runs):
            order, met, byes = _danish_history(n_lines, seed=run)
            times.append(_cpu(lambda: danish.pair_danish(order, met, byes)))  # noqa: B023
        print(
            f"danish {n_lines:>5} lines: median {statistics.median(times) * 1000:8.1f} ms"
            f"  ({min(times) * 1000:.1f}–{max(times) * 1000:.1f} ms, {args.runs} runs)"
        )
    for n_lines in args.matching_lines:
        # worst case: the repair step reaches the top, a matching over the whole table
        order, met, byes = _danish_history(n_lines, seed=0)
        playing = order[: len(order) - len(order) % 2]
        times = [
            _cpu(lambda: danish._matching(playing, met, 16, allow_rematch=False))  # noqa: B023
            for _run in range(args.runs)
        ]
        print(
            f"danish {n_lines:>5} lines, matching over the whole table (window 16): median "
            f"{statistics.median(times) * 1000:8.1f} ms"
            f"  ({min(times) * 1000:.1f}–{max(times) * 1000:.1f} ms, {args.runs} runs)"
        )
    fast_matching = swiss._fast_matching
    swiss_sizes = [(n, "") for n in args.swiss_lines]
    swiss_sizes += [(n, ", networkx's matcher") for n in args.swiss_networkx]
    swiss_times: dict[tuple[int, str], list[float]] = {}
    for n_lines, matcher in swiss_sizes:
        times = []
        for run in range(args.runs):
            swiss._fast_matching = contextlib.nullcontext if matcher else fast_matching
            start, rounds = _swiss_history(n_lines, seed=run)
            lines, played = swiss.line_histories(start, rounds)
            times.append(
                _cpu(
                    lambda: swiss.pair_swiss(
                        lines,  # noqa: B023
                        played,  # noqa: B023
                        round_number=ROUNDS_PLAYED + 1,
                        total_rounds=ROUNDS_PLAYED + 1,
                        bye_score=BYE_VP,
                    )
                )
            )
        swiss._fast_matching = fast_matching
        swiss_times[n_lines, matcher] = times
        print(
            f"swiss  {n_lines:>5} lines{matcher}: median "
            f"{statistics.median(times) * 1000:8.1f} ms"
            f"  ({min(times) * 1000:.1f}–{max(times) * 1000:.1f} ms, {args.runs} runs)"
        )
    for n_lines in args.swiss_networkx:
        if (n_lines, "") in swiss_times:  # the same histories (seed = run), one after the other
            ratios = sorted(
                theirs / ours
                for theirs, ours in zip(
                    swiss_times[n_lines, ", networkx's matcher"],
                    swiss_times[n_lines, ""],
                    strict=True,
                )
            )
            print(
                f"swiss  {n_lines:>5} lines: networkx's matcher / ours, run by run: median "
                f"{statistics.median(ratios):.2f}x ({ratios[0]:.2f}–{ratios[-1]:.2f})"
            )
    for n_lines in args.swiss_weights:
        calls, bits = _swiss_weights(n_lines)
        print(
            f"swiss  {n_lines:>5} lines, 7 rounds: {calls} maximum-weight matchings, "
            f"edge weights up to {bits} bits"
        )


if __name__ == "__main__":
    main()
