"""Verification throughput: deals verified per second on one core, parsing included.

2-player scopa, 11-point matches from the simulator, fed as JSON bytes to `verify_document`
(the same call the CLI and the workers make). Usage:

    .venv/bin/python bench/verify.py [--matches 400] [--repeat 3] [--profile] [--compare-parsers]
    .venv/bin/python bench/verify.py --corpus FILE.jsonl   # records of another origin
    .venv/bin/python bench/verify.py --corpus FILE.jsonl --pure --cli

`--pure` also times the engine's .py source (imported as a second copy of the package, see
scopa/native.py) in the same run, runs alternating, so the compiled and the pure-Python
figures share the machine's load. `--cli` times `manage.py verify_record` itself, as separate
processes over one file per record (compiled, and with SCOPA_ENGINE_PURE=1 when `--pure`):
whole-process CPU, and the per-record rate once the start-up (Django, imports) is taken off.
`--compare-parsers` times decoding alone with msgspec (what the engine uses) and with an
equivalent strict pydantic v2 model, the measurement behind the choice of msgspec.
"""

import argparse
import cProfile
import json
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model

from scopa import native, simulate_match, verify_document

ROOT = Path(__file__).resolve().parents[1]


def corpus(count: int) -> tuple[list[bytes], int]:
    records = [
        json.dumps(simulate_match(variant="scopa", seats=2, end={"target": 11}, seed=i)).encode()
        for i in range(count)
    ]
    deals = sum(len(json.loads(r)["deals"]) for r in records)
    return records, deals


def run_once(
    records: list[bytes], verify: Callable[[bytes], dict] = verify_document
) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds). CPU time is the per-core figure: the machine
    is shared, and wall time counts the moments another process had the core."""
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    for data in records:
        verdict = verify(data)
        if not verdict["valid"]:
            raise SystemExit(f"benchmark record failed to verify: {verdict['errors']}")
    return time.process_time() - start_cpu, time.perf_counter() - start_wall


def compare_parsers(records: list[bytes], deals: int, repeat: int) -> None:
    """Decode-only cost per deal: msgspec structs vs the same shape in strict pydantic v2."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    from scopa import CARD_CODES
    from scopa.record import _DECODER

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


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


COMMANDS = {
    "manage.py verify_record": ["manage.py", "verify_record"],
    "python -m scopa.cli": ["-m", "scopa.cli"],
}


def cli_seconds(command: list[str], files: list[str], pure: bool) -> float:
    """CPU seconds of one command-line process over FILES, answers to /dev/null."""
    env = {**os.environ, native.PURE_ENV: "1" if pure else ""}
    before = children_cpu()
    subprocess.run(
        [sys.executable, *command, *files],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        check=False,  # the corpus is legal; a wrong exit status would show in the CPU figures
    )
    return children_cpu() - before


def bench_cli(records: list[bytes], deals: int, repeat: int, pure: bool) -> None:
    """The command lines end to end: each record in its own file, the file list given
    `copies` times to one process (start-up becomes a small part), and a process with one file
    for the start-up alone."""
    copies = 5
    with tempfile.TemporaryDirectory() as folder:
        names = []
        for i, data in enumerate(records):
            path = Path(folder, f"{i:05d}.json")
            path.write_bytes(data)
            names.append(str(path))
        modes = [False, True] if pure else [False]
        seconds: dict[tuple[str, bool, int], list[float]] = {}
        for _ in range(repeat):
            for label, command in COMMANDS.items():
                for mode in modes:
                    for size, files in ((1, names[:1]), (copies, names * copies)):
                        key = (label, mode, size)
                        seconds.setdefault(key, []).append(cli_seconds(command, files, mode))
        total = deals * copies
        print(
            f"command lines: {len(names) * copies} files, {total} deals per process; "
            f"deals/s of CPU, median of {repeat} runs (min–max)"
        )

        def spread(values: list[float]) -> str:
            values = sorted(values)
            return f"{statistics.median(values):,.0f} ({values[0]:,.0f}–{values[-1]:,.0f})"

        for label in COMMANDS:
            for mode in modes:
                engine = "pure Python" if mode or not native.compiled() else "compiled"
                wholes, starts = seconds[label, mode, copies], seconds[label, mode, 1]
                print(
                    f"  {label}, {engine}: whole process {spread([total / w for w in wholes])}"
                    f", start-up {statistics.median(starts):.2f} s CPU, without start-up "
                    f"{spread([total / (w - s) for w, s in zip(wholes, starts, strict=True)])}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print the cProfile top 20")
    parser.add_argument("--compare-parsers", action="store_true", help="msgspec vs pydantic")
    parser.add_argument(
        "--corpus", type=Path, help="JSON lines of records instead (bench/foreign_corpus.py)"
    )
    parser.add_argument("--pure", action="store_true", help="also the .py source, same run")
    parser.add_argument("--cli", action="store_true", help="time manage.py verify_record")
    args = parser.parse_args()
    if args.corpus:
        records = [line.encode() for line in args.corpus.read_text().splitlines() if line]
        deals = sum(len(json.loads(r)["deals"]) for r in records)
    else:
        records, deals = corpus(args.matches)
    source_copy = native.load_source_copy("_bench_pure_engine") if args.pure else None
    run_once(records[:20])  # warm caches
    runs = []
    pure_runs = []
    for _ in range(args.repeat):  # alternating, so both see the same load
        runs.append(run_once(records))
        if source_copy is not None:
            pure_runs.append(run_once(records, source_copy.verify_document))
    best = min(cpu for cpu, _ in runs)
    best_wall = min(wall for _, wall in runs)
    rates = sorted(deals / cpu for cpu, _ in runs)
    print(f"machine: {platform.platform()}; python {platform.python_version()}; cpu {cpu_model()}")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"engine: {'compiled (mypyc)' if native.compiled() else 'pure Python'}", end="")
    print(f" ({native.pure_reason})" if native.pure_reason else "")
    print(f"corpus: {len(records)} matches, {deals} deals, {sum(map(len, records)) / 1e6:.1f} MB")
    print(f"deals/s: {deals / best:,.0f}")
    print(f"matches/s: {len(records) / best:,.1f}")
    print(f"µs per deal: {best / deals * 1e6:.1f}")
    print(f"(CPU time, best of {args.repeat}; wall clock: {deals / best_wall:,.0f} deals/s)")
    print(
        f"deals/s of CPU over {args.repeat} runs: median {statistics.median(rates):,.0f} "
        f"({rates[0]:,.0f}–{rates[-1]:,.0f})"
    )
    if pure_runs:
        pure_best = min(cpu for cpu, _ in pure_runs)
        print(
            f"pure Python, same run: {deals / pure_best:,.0f} deals/s "
            f"({pure_best / deals * 1e6:.1f} µs per deal; compiled {pure_best / best:.2f}x)"
        )
        pure_rates = sorted(deals / cpu for cpu, _ in pure_runs)
        ratios = sorted(p / c for (c, _), (p, _) in zip(runs, pure_runs, strict=True))
        print(
            f"pure Python deals/s over {args.repeat} runs: median "
            f"{statistics.median(pure_rates):,.0f} ({pure_rates[0]:,.0f}–{pure_rates[-1]:,.0f}); "
            f"compiled faster, run by run: median {statistics.median(ratios):.2f}x "
            f"({ratios[0]:.2f}–{ratios[-1]:.2f})"
        )
    if args.cli:
        bench_cli(records, deals, args.repeat, args.pure)
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
