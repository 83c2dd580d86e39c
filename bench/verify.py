"""Verification throughput: deals verified per second on one core, parsing included.

2-player scopa, 11-point matches from the simulator, fed as JSON bytes to `verify_document`
(the same call the CLI and the workers make). Usage:

    .venv/bin/python bench/verify.py [--matches 400] [--repeat 3] [--profile]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print the cProfile top 20")
    args = parser.parse_args()
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
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run_once(records)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
