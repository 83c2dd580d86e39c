"""Benchmark: importing a federation export, every result through the result writer.

Usage (in a throwaway ``test_<name>`` database of the configured one, migrated at the start and
dropped at the end; the embedded default, SQLite, works too):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench .venv/bin/python bench/importer.py

Builds the mixed event of the export round-trip test (48 lines: three Mitchell rounds, three
Danish rounds, an eight-line knock-out), exports it, then imports the document ``--runs`` times
under new slugs, each import in a transaction that is rolled back. Reports the CPU time of
``import_document`` (``time.process_time``: this process only, not the database server's) and
the number of queries of one import.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.machine import cpu_model, load_average, throwaway_database  # noqa: E402
from tournaments.models import Stage  # noqa: E402
from tournaments.services import pairing, schedule  # noqa: E402
from tournaments.services.export import build_document  # noqa: E402
from tournaments.services.importer import import_document  # noqa: E402


class _Rollback(Exception):
    pass


def mixed_event() -> dict:
    """The export of a 48-line Mitchell, Danish and knock-out event (built, then rolled back)."""
    from tests.pages.factories import play_stage
    from tests.tournaments.conftest import make_tournament

    document: dict = {}
    try:
        with transaction.atomic():
            tournament = make_tournament(n_lines=48, slug="bench-import-source")

            def stage(order, name, kind, **fields):
                return Stage.objects.create(
                    tournament=tournament, order=order, name=name, kind=kind, **fields
                )

            mitchell = stage(1, "Mitchell", Stage.Kind.MITCHELL, rounds_planned=3)
            danish = stage(2, "Danese", Stage.Kind.DANISH, rounds_planned=3, advance_count=8)
            knockout = stage(3, "Finali", Stage.Kind.KNOCKOUT)
            for paired in (mitchell, danish):
                for _number in range(3):
                    pairing.pair_next_round(paired)
                    play_stage(paired)
                schedule.close_stage(paired)
            for _number in range(3):
                play_stage(knockout)
            document = json.loads(json.dumps(build_document(tournament)))
            raise _Rollback
    except _Rollback:
        pass
    return document


def import_once(document: dict, slug: str, *, count_queries=False) -> tuple[float, int]:
    queries = 0
    # the rating replay follows the commit (``tournament_imported``), and nothing here commits
    try:
        with transaction.atomic():
            if count_queries:
                with CaptureQueriesContext(connection) as captured:
                    start = time.process_time()
                    import_document(document, slug=slug)
                    spent = time.process_time() - start
                queries = len(captured)
            else:
                start = time.process_time()
                import_document(document, slug=slug)
                spent = time.process_time() - start
            raise _Rollback
    except _Rollback:
        pass
    return spent, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    logging.disable(logging.INFO)
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; {load_average()} at the start")
    # its own migrated database: the configured one may be empty (the embedded default's file)
    with throwaway_database() as name:
        print(f"database: {connection.vendor} {name}")
        document = mixed_event()
        matches = sum(len(r["matches"]) for s in document["stages"] for r in s["rounds"])
        _spent, queries = import_once(document, "bench-import-0", count_queries=True)
        times = [import_once(document, f"bench-import-{run}")[0] for run in range(1, args.runs + 1)]
    print(f"{load_average()} at the end")
    print(f"document: {matches} matches; one import: {queries} queries")
    print(
        f"import_document CPU over {args.runs} runs: min {min(times):.3f} s, "
        f"median {statistics.median(times):.3f} s, max {max(times):.3f} s "
        f"({1000 * statistics.median(times) / matches:.1f} ms a match)"
    )


if __name__ == "__main__":
    main()
