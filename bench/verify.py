"""Verification throughput: deals verified per second on one core, parsing included.

2-player scopa, 11-point matches from the simulator, fed as JSON bytes to `verify_document`
(the same call the CLI and the workers make). Usage:

    .venv/bin/python bench/verify.py [--matches 400] [--repeat 3] [--profile] [--compare-parsers]
    .venv/bin/python bench/verify.py --corpus FILE.jsonl   # records of another origin

`--compare-parsers` times decoding alone with msgspec (what the engine uses) and with an
equivalent strict pydantic v2 model, the measurement behind the choice of msgspec.
"""

import argparse
import cProfile
import json
import platform
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.engine import simulate_match, verify_document


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def corpus(count: int) -> tuple[list[bytes], int]:
    records = [
        json.dumps(simulate_match(variant="scopa", seats=2, end={"target": 11}, seed=i)).encode()
        for i in range(count)
    ]
    deals = sum(len(json.loads(r)["deals"]) for r in records)
    return records, deals


def run_once(records: list[bytes]) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds). CPU time is the per-core figure: the machine
    is shared, and wall time counts the moments another process had the core."""
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    for data in records:
        verdict = verify_document(data)
        if not verdict["valid"]:
            raise SystemExit(f"benchmark record failed to verify: {verdict['errors']}")
    return time.process_time() - start_cpu, time.perf_counter() - start_wall


def compare_parsers(records: list[bytes], deals: int, repeat: int) -> None:
    """Decode-only cost per deal: msgspec structs vs the same shape in strict pydantic v2."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    from games.engine import CARD_CODES
    from games.engine.record import _DECODER

    card_code = Literal.__getitem__(CARD_CODES)

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)

    class Options(Strict):
        rebello: bool | None = None
        napola: bool | None = None
        primiera_missing_suit: Literal["loses", "compare_present"] | None = None
        void_three_kings: bool | None = None
        forced_capture: bool | None = None
        carte_viste: bool | None = None
        carte_scoperte: bool | None = None
        deck_style: str | None = None

    class Play(Strict):
        card: card_code
        take: list[card_code] = []
        seat: int | None = None
        t_ms: int | None = None

    class Deal(Strict):
        dealer: int
        deck: list[card_code]
        plays: list[Play] = []
        declared: list[int] | None = None
        void: bool = False
        start_ms: int | None = None

    class End(Strict):
        target: int | None = None
        deals: int | None = None
        time_limit_s: float | None = None

    class Outcome(Strict):
        kind: Literal["completed", "timeout", "abandon"]
        seat: int | None = None
        time_up_in_deal: int | None = None
        t_ms: int | None = None

    class Record(Strict):
        schema_: Literal["scopa-match/1"] = Field(alias="schema")
        variant: Literal["scopa", "scopa-d-assi", "scopa-15"]
        end: End
        seats: list[str]
        deals: list[Deal]
        options: Options = Options()
        knockout: bool = False
        outcome: Outcome = Outcome(kind="completed")

    def timed(decode) -> float:
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            for data in records:
                decode(data)
            best = min(best, time.process_time() - start)
        return best / deals * 1e6

    msgspec_us = timed(_DECODER.decode)
    pydantic_us = timed(Record.model_validate_json)
    print(f"decode only, µs per deal: msgspec {msgspec_us:.1f}, pydantic {pydantic_us:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print the cProfile top 20")
    parser.add_argument("--compare-parsers", action="store_true", help="msgspec vs pydantic")
    parser.add_argument(
        "--corpus", type=Path, help="JSON lines of records instead (bench/foreign_corpus.py)"
    )
    args = parser.parse_args()
    if args.corpus:
        records = [line.encode() for line in args.corpus.read_text().splitlines() if line]
        deals = sum(len(json.loads(r)["deals"]) for r in records)
    else:
        records, deals = corpus(args.matches)
    run_once(records[:20])  # warm caches
    runs = [run_once(records) for _ in range(args.repeat)]
    best = min(cpu for cpu, _ in runs)
    best_wall = min(wall for _, wall in runs)
    print(f"machine: {platform.platform()}; python {platform.python_version()}; cpu {cpu_model()}")
    print(f"corpus: {len(records)} matches, {deals} deals, {sum(map(len, records)) / 1e6:.1f} MB")
    print(f"deals/s: {deals / best:,.0f}")
    print(f"matches/s: {len(records) / best:,.1f}")
    print(f"µs per deal: {best / deals * 1e6:.1f}")
    print(f"(CPU time, best of {args.repeat}; wall clock: {deals / best_wall:,.0f} deals/s)")
    if args.compare_parsers:
        compare_parsers(records, deals, args.repeat)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run_once(records)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
