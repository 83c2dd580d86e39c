"""CPU per record of verification in one process: batches of records, and lone records.

What a worker spends on its own work, without Celery, the broker or the rating task: the
engine alone (``scopa.verify_document`` on each record's JSON text);
``games.services.verify_waiting`` over batches of ``--batch`` records waiting (the burst case);
and ``verify_waiting`` on one record at a time with nothing else waiting (the paced case, where
each message finds only its own record). It reports CPU per record of this process and of
its PostgreSQL backend (from ``/proc``), and queries per record:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/8 \
        .venv/bin/python bench/verify_batch.py --records 400 --lone 100

It creates a throwaway ``test_<name>`` database; the broker only holds the verification messages
the submissions send (nobody consumes them; the script empties nothing, so use a Redis database
of its own and flush it after). Run it from another checkout (``cd`` there) to compare two trees
in one session; that checkout's engine runs from its .py source unless it was installed too (or
got this one's compiled files and ``scopa/_native.json``), and the ``engine:`` line says
which ran.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import logging  # noqa: E402

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model, engine_build, load_average, throwaway_database  # noqa: E402

logging.disable(logging.WARNING)


def backend_cpu() -> float:
    """CPU seconds of this connection's PostgreSQL backend so far (same machine)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(work, n):
    """(CPU ms per record here, in PostgreSQL, queries per record) of ``work()``."""
    pg, cpu = backend_cpu(), time.process_time()
    with CaptureQueriesContext(connection) as queries:
        work()
    cpu, pg = time.process_time() - cpu, backend_cpu() - pg
    return cpu / n * 1000, pg / n * 1000, len(queries) / n


def run(n_records, n_lone, batch):
    from games import services
    from games.models import Submission
    from tests.api import factories

    n_lines = next(n for n in range(2, 400) if n * (n - 1) // 2 >= n_records + n_lone)
    organizer = factories.user("bench", is_staff=True)
    tournament = factories.tournament(lines=n_lines, organizer=organizer)
    matches = factories.matches(tournament)
    records = [factories.record(tournament, seed=i) for i in range(len(matches))]
    print(f"{len(matches)} matches, {n_lines} lines")

    from scopa import verify_document

    texts = [json.dumps(record) for record in records[:n_records]]
    started = time.process_time()
    for text in texts:
        verify_document(text)
    engine_ms = (time.process_time() - started) / len(texts) * 1000

    burst = [
        services.submit_record(m, r, user=organizer).submission.pk
        for m, r in zip(matches[:n_records], records[:n_records], strict=True)
    ]

    def verify_burst():
        for first in range(0, len(burst), batch):
            services.verify_waiting(burst[first], bound=batch)

    burst_ms, burst_pg, burst_q = measured(verify_burst, len(burst))
    assert set(Submission.objects.filter(pk__in=burst).values_list("state", flat=True)) == {
        "verified"
    }

    lone = list(zip(matches[n_records:], records[n_records:], strict=True))[:n_lone]
    cpu = pg = queries = 0.0
    for match, record in lone:
        with mock.patch.object(services.enqueueing, "enqueue_verification"):
            pk = services.submit_record(match, record, user=organizer).submission.pk
        one = measured(lambda pk=pk: services.verify_waiting(pk, bound=batch), 1)
        cpu, pg, queries = cpu + one[0], pg + one[1], queries + one[2]
    n = max(len(lone), 1)
    return engine_ms, (burst_ms, burst_pg, burst_q), (cpu / n, pg / n, queries / n)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=400, help="records verified in batches")
    parser.add_argument("--lone", type=int, default=100, help="records verified one at a time")
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise SystemExit("set DATABASE_URL to a PostgreSQL database (batches need it)")
    if not settings.CELERY_BROKER_URL:
        raise SystemExit("set CELERY_BROKER_URL: submissions must queue, not verify at once")
    with throwaway_database():
        engine_ms, burst, lone = run(args.records, args.lone, args.batch)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {load_average()}; tree: {ROOT}")
    print(f"engine: {engine_build()}")
    print(f"engine alone: {engine_ms:.2f} ms CPU per record")
    for label, (cpu, pg, queries) in (
        (f"batches of {args.batch}", burst),
        ("lone records", lone),
    ):
        print(
            f"{label}: {cpu:.2f} ms CPU per record here, PostgreSQL {pg:.2f} ms "
            f"({(cpu + pg) / engine_ms:.1f} times the engine), {queries:.1f} queries per record"
        )


if __name__ == "__main__":
    main()
