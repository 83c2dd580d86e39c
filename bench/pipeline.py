"""Records per second from submission to verified and to rated, with 1 or 2 worker processes.

Needs PostgreSQL and a broker (Redis or RabbitMQ):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/4 \
        .venv/bin/python bench/pipeline.py --records 1000 --workers 2            # burst
    ... bench/pipeline.py --records 1000 --workers 2 --batch 50                  # in batches
    ... bench/pipeline.py --records 500 --rate 50 --workers 2                    # paced
    ... bench/pipeline.py --records 1000 --workers 2 --batch 50 --runs 5         # five in a row

``--runs N`` repeats the run, each on a fresh database with the queues emptied between, and
ends with the median and range of each goal's figure: on a shared machine one run says little.

It creates a throwaway ``test_<name>`` database, a tournament whose group has enough lines for
``--records`` matches and legal records (2-player scopa to 11). Burst (no ``--rate``): every
record is submitted through ``games.services.submit_record`` (the API's code path without HTTP)
before any worker consumes, so submission is timed on its own (a record sends a wake-up only
when none is out, ``games.services.wake_workers``: a handful of messages for the thousand);
then ``--workers`` worker processes (``celery worker -c 1`` each), started beforehand on a
queue nobody sends to, are told to consume the records' queue (``add_consumer``) and drain it,
timed from then to the last verification.
With ``--batch N`` the records are submitted N at a time through ``submit_records`` (what
``POST /api/v1/records/`` calls), one verification message per batch. Paced: workers run first
and records arrive at ``--rate`` per second, each posted at its time by one of ``--submitters``
threads (4; until 2026-11-24 one thread posted them one after the other, so each waited for
the commit of the one before and the submitter, not the API, capped the rate near 30/s), each
keeping its database connection as an API server does (until 2026-11-24, late morning, each
record opened one of its own, which loaded the workers' cores). Latency is
``verified_at - submitted_at``; submit-to-rated uses the time this script first saw the match's
``RatedMatch`` row (polled every 50 ms by a thread of its own from the first submission on; the
figures before 2026-11-23 evening polled only once every record was submitted, which added the
rest of the submission to every paced submit-to-rated). CPU per record is read from ``/proc``
for the worker processes and for the PostgreSQL backends of the test database (this script's
own excluded), from the moment every worker answers a ping to the last rating, so their
start-up is left out (until 2026-11-24 it was estimated from another worker and subtracted,
within about 1 ms a record);
queries per record are counted in-process over a sample (verification plus the share of one
debounced rating run).
"""

import argparse
import collections
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import logging  # noqa: E402

from django.conf import settings  # noqa: E402
from django.db import DEFAULT_DB_ALIAS, connection, connections  # noqa: E402
from django.utils import timezone  # noqa: E402
from machine import (  # noqa: E402
    cpu_model,
    database_url,
    engine_build,
    load_average,
    throwaway_database,
)

logging.disable(logging.WARNING)


def start_worker(db_name, logfile, index=0):
    env = dict(
        os.environ,
        DATABASE_URL=database_url(db_name),
        LOG_LEVEL="WARNING",
        SCOPA_RATING_DEBOUNCE_S="0.5",
    )
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--pool",
        "prefork",
        "-c",
        "1",
        "-n",
        f"bench{index}@%h",
        "--without-gossip",
        "--without-mingle",
        "-l",
        "WARNING",
        "-Q",
        IDLE_QUEUE,
    ]
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True
    )


def percentile(values, p):
    ordered = sorted(values)
    k = max(0, math.ceil(p / 100 * len(ordered)) - 1)
    return ordered[k]


def cpu_seconds(pids):
    """User + system CPU of the processes (and their waited-for children), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])
    return total / tick


def group_pids(pgid):
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            pids.append(int(stat.parent.name))
    return pids


def backend_pids(own=()):
    """The PostgreSQL backends of the test database but this script's: its main connection and
    ``own`` (the rating watcher's, which may still be listed for a moment after it closes)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND NOT pid = ANY(%s)",
            [list(own)],
        )
        return [row[0] for row in cursor.fetchall()]


def queries_per_record(tournament, organizer, n=40):
    """In-process: verification of ``n`` records and the one rating run that rates them."""
    from django.test.utils import CaptureQueriesContext

    from games import services
    from tests.api import factories

    matches = factories.matches(tournament)[-n:]
    subs = [
        services.submit_record(m, factories.record(tournament, seed=10_000 + i)).submission
        for i, m in enumerate(matches)
    ]
    from ratings.services.ratings import rate_pending

    with CaptureQueriesContext(connection) as verify:
        if services.batching_available():  # one wake-up's work, as a worker runs it
            services.verify_all_waiting(bound=n + 1, budget_s=60)
        else:
            for sub in subs:
                services.run_verification(sub.pk)
    with CaptureQueriesContext(connection) as rate:
        rate_pending()
    return len(verify) / n, len(rate) / n


def engine_cpu_ms(records):
    """CPU per record of the rules engine alone on this run's records, in this process (what a
    worker's CPU is compared with): ``compute_verdict`` on each record's JSON text, as a worker
    hands it over, best of three passes."""
    import json

    from games import services

    texts = [json.dumps(record) for record in records]
    best = math.inf
    for _ in range(3):
        started = time.process_time()
        for text in texts:
            services.compute_verdict(text)
        best = min(best, time.process_time() - started)
    return best / len(texts) * 1000


IDLE_QUEUE = "bench-idle"  # a queue nobody sends to: the workers start on it


def declare_task_queue() -> None:
    """Declare the records' queue (and its exchange) as the settings define it, before any
    worker starts. The workers start on ``IDLE_QUEUE`` only, and on a RabbitMQ vhost where the
    task queue does not exist yet Celery then fails to bind it for native delayed delivery, so
    every rating countdown waited in a worker's memory (a worker started on the task queue, as
    in production, declares it first)."""
    from config.celery import app

    queue = app.amqp.queues[app.conf.task_default_queue]
    with app.connection_for_write() as conn:
        queue(conn.default_channel).declare()


def ready_workers(names, timeout_s=60.0):
    """Wait until every worker named answers a ping (started, connected, consuming)."""
    from config.celery import app

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answered = {
            name for reply in app.control.ping(destination=names, timeout=1.0) for name in reply
        }
        if answered >= set(names):
            return
    raise SystemExit(f"workers not ready after {timeout_s:.0f} s: {names}")


def open_the_queue(names):
    """The ready workers start consuming the queue the records' messages are in."""
    from config.celery import app

    queue = app.conf.task_default_queue
    replies = app.control.add_consumer(queue, destination=names, reply=True, timeout=5.0)
    if len(replies) != len(names):
        raise SystemExit(f"add_consumer answered by {len(replies)} of {len(names)} workers")


def run(n_records, lines, rate, n_workers, db_name, log, batch=0, submitters=4):
    from games import services
    from games.models import Submission
    from ratings.models import RatedMatch, RatingRun
    from tests.api import factories
    from tournaments.models import Match

    n_lines = lines or next(n for n in range(2, 200) if n * (n - 1) // 2 >= n_records + 40)
    organizer = factories.user("bench", is_staff=True)
    tournament = factories.tournament(lines=n_lines, organizer=organizer)
    # read as the API reads them (games/api/views.py): with their round, stage and tournament
    matches = list(
        Match.objects.select_related("round__stage__tournament", "home", "away")
        .filter(pk__in=[m.pk for m in factories.matches(tournament)[:n_records]])
        .order_by("pk")
    )
    records = [factories.record(tournament, seed=i) for i in range(len(matches))]
    size = sum(len(str(r)) for r in records) / len(records)
    print(f"{len(matches)} matches, {n_lines} lines, records ~{size / 1024:.1f} KiB each")

    # The workers start on a queue nobody sends to; their CPU and PostgreSQL's are read once
    # they answer a ping, and only then do they consume the records' queue: what is measured is
    # their work, without their start-up.
    host = socket.gethostname()
    names = [f"bench{i}@{host}" for i in range(n_workers)]
    declare_task_queue()
    workers = [start_worker(db_name, log, i) for i in range(n_workers)]
    ready_workers(names)
    ready_cpu = sum(cpu_seconds(group_pids(w.pid)) for w in workers)
    ready_pg_cpu = cpu_seconds(backend_pids())

    def start():
        open_the_queue(names)

    if rate:
        start()
        time.sleep(1)  # the consumers are set up before the clock starts
    match_ids = {m.pk for m in matches}
    rated_at = {}
    watching = threading.Event()
    watcher_backend: list[int] = []

    def watch_ratings():
        """Note when each match's rating row appears, from the first submission on (a thread
        of its own, with its own connection: the submitting loop must not delay it)."""
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                watcher_backend.append(cursor.fetchone()[0])
            while not watching.is_set():
                now = timezone.now()
                for mid in RatedMatch.objects.filter(match__in=match_ids).values_list(
                    "match_id", flat=True
                ):
                    rated_at.setdefault(mid, now)
                time.sleep(0.05)
        finally:
            connection.close()

    watcher = threading.Thread(target=watch_ratings, daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    if batch:
        # as a platform posts them (POST /api/v1/records/): one message per batch
        pairs = list(zip(matches, records, strict=True))
        for first in range(0, len(pairs), batch):
            if rate:
                delay = t0 + first / rate - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            services.submit_records(pairs[first : first + batch], user=organizer)

    # Each submitting thread keeps its database connection, as an API server's processes do
    # (``CONN_MAX_AGE``); the main thread closes them once every record is posted. Until
    # 2026-11-24 (late morning) each paced record opened and closed one: a PostgreSQL backend
    # started 50 times a second on the cores the workers use, load the product does not make.
    kept = []
    keeping = threading.Lock()

    def submit_one(match, record):
        try:
            services.submit_record(match, record, user=organizer)
        finally:
            if threading.current_thread() is not threading.main_thread():
                own = connections[DEFAULT_DB_ALIAS]  # this thread's
                with keeping:
                    if not any(other is own for other in kept):
                        own.inc_thread_sharing()  # so that the main thread may close it
                        kept.append(own)

    # Paced, each record goes out at its time from one of ``submitters`` threads, as players'
    # platforms post over several connections; one thread alone waits for each submission's
    # commit before the next (its own limit, about 30 records/s here, not the API's).
    try:
        with ThreadPoolExecutor(max_workers=submitters if rate else 1) as pool:
            pending = []
            for index, (match, record) in enumerate(zip(matches, records, strict=True)):
                if batch:
                    break
                if rate:
                    delay = t0 + index / rate - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                    pending.append(pool.submit(submit_one, match, record))
                else:
                    submit_one(match, record)
            for future in pending:
                future.result()
    finally:
        for own in kept:  # the throwaway database is dropped only once nobody is connected
            own.close()
    submit_s = time.perf_counter() - t0
    print(f"submitted in {submit_s:.2f} s ({len(matches) / submit_s:.0f} records/s)")
    drain_from = None
    if not rate:
        start()
        drain_from = time.perf_counter()
    deadline = time.monotonic() + 900
    while len(rated_at) < len(match_ids) or Submission.objects.filter(state="pending").exists():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the workers")
        time.sleep(0.05)
    verified_all = time.perf_counter()
    watching.set()
    watcher.join()
    worker_cpu = sum(cpu_seconds(group_pids(w.pid)) for w in workers) - ready_cpu
    pg_cpu = cpu_seconds(backend_pids(own=watcher_backend)) - ready_pg_cpu
    for w in workers:
        os.killpg(w.pid, signal.SIGTERM)
    for w in workers:
        w.wait(30)
    subs = list(Submission.objects.values_list("match_id", "state", "submitted_at", "verified_at"))
    # results rated on top (incremental) or re-rated because they came in out of order (replay)
    rating_runs = collections.Counter(RatingRun.objects.values_list("kind", flat=True))
    states = {s for _m, s, _a, _b in subs}
    first = min(a for _m, _s, a, _b in subs)
    last = max(b for _m, _s, _a, b in subs)
    wall = (last - first).total_seconds()
    latencies = [(b - a).total_seconds() for _m, _s, a, b in subs]
    to_rated = [(rated_at[m] - a).total_seconds() for m, _s, a, _b in subs if m in rated_at]
    per_verify, per_rate = queries_per_record(tournament, organizer)
    engine_ms = engine_cpu_ms(records)
    return {
        "records": len(subs),
        "states": sorted(states),
        "submit_rate": len(subs) / submit_s,
        "throughput": len(subs) / wall,
        "drain": (len(subs) / (verified_all - drain_from)) if drain_from else None,
        # the workers at work: from the first verification to the last (their boot left out)
        "drain_verifying": len(subs) / (last - min(b for _m, _s, _a, b in subs)).total_seconds(),
        "median_ms": statistics.median(latencies) * 1000,
        "p95_ms": percentile(latencies, 95) * 1000,
        "max_ms": max(latencies) * 1000,
        "rated_median_ms": statistics.median(to_rated) * 1000,
        "rated_p95_ms": percentile(to_rated, 95) * 1000,
        "worker_cpu_ms": worker_cpu / len(subs) * 1000,
        "ready_cpu_s": ready_cpu / len(workers),
        "pg_cpu_ms": pg_cpu / len(subs) * 1000,
        "engine_ms": engine_ms,
        "queries_verify": per_verify,
        "queries_rate": per_rate,
        "rating_runs": dict(sorted(rating_runs.items())),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=600)
    parser.add_argument("--lines", type=int, default=0, help="lines in the group (default: fit)")
    parser.add_argument(
        "--rate",
        type=float,
        default=0,
        help="submissions per second (default: as fast as possible)",
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes (-c 1 each)")
    parser.add_argument(
        "--batch",
        type=int,
        default=0,
        help="submit N records at a time, as POST /api/v1/records/ does (0: one by one)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="runs one after the other, each on a fresh database, summed up at the end",
    )
    parser.add_argument(
        "--submitters",
        type=int,
        default=4,
        help="paced: threads posting the records, each at its time (1: one after the other)",
    )
    args = parser.parse_args()
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise SystemExit("set DATABASE_URL to a PostgreSQL database")
    if not settings.CELERY_BROKER_URL:
        raise SystemExit("set CELERY_BROKER_URL to a broker (Redis or RabbitMQ)")
    log_path = Path("/tmp") / f"bench-pipeline-worker-{os.getpid()}.log"
    results = []
    for index in range(args.runs):
        with log_path.open("ab") as log, throwaway_database() as test_name:
            result = run(
                args.records,
                args.lines,
                args.rate,
                args.workers,
                test_name,
                log,
                args.batch,
                args.submitters,
            )
        purge_queues()  # what a run left queued (no-op deliveries, a rating) is not the next's
        if args.runs > 1:
            ended = time.strftime("%H:%M:%S UTC", time.gmtime())
            print(f"-- run {index + 1} of {args.runs}, ended {ended}")
        report(result)
        results.append(result)
    if len(results) > 1:
        summarize(results)


def times_the_engine(result) -> float:
    return (result["worker_cpu_ms"] + result["pg_cpu_ms"]) / result["engine_ms"]


def purge_queues() -> None:
    from config.celery import app

    app.control.purge()


def report(result) -> None:
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {load_average()}")
    print(f"engine: {engine_build()}")
    print(f"states: {result['states']}")
    print(f"records: {result['records']}, submitted at {result['submit_rate']:.0f}/s")
    print(
        f"throughput, first submission to last verification: {result['throughput']:.1f} records/s"
    )
    if result["drain"]:
        print(f"drain, workers' start to last verification: {result['drain']:.1f} records/s")
        print(f"drain, first to last verification: {result['drain_verifying']:.1f} records/s")
    print(
        f"latency submission -> verified: median {result['median_ms']:.0f} ms, "
        f"p95 {result['p95_ms']:.0f} ms, max {result['max_ms']:.0f} ms"
    )
    print(
        f"latency submission -> rated: median {result['rated_median_ms']:.0f} ms, "
        f"p95 {result['rated_p95_ms']:.0f} ms"
    )
    print(
        f"CPU per record from the workers' ready: workers {result['worker_cpu_ms']:.2f} ms, "
        f"PostgreSQL {result['pg_cpu_ms']:.2f} ms (start-up left out: "
        f"{result['ready_cpu_s']:.2f} s a worker)"
    )
    both = result["worker_cpu_ms"] + result["pg_cpu_ms"]
    print(
        f"engine alone: {result['engine_ms']:.2f} ms per record; workers plus PostgreSQL: "
        f"{both:.2f} ms, {times_the_engine(result):.1f} times the engine"
    )
    print(
        f"queries per record (in-process sample): verification {result['queries_verify']:.1f}, "
        f"rating {result['queries_rate']:.2f}"
    )
    print(f"rating runs: {result['rating_runs']}")


def summarize(results) -> None:
    """The runs side by side: on a shared machine one run says little (see docs/performance.md)."""

    def spread(values, unit="", digits=1):
        ordered = sorted(values)
        return (
            f"median {statistics.median(ordered):.{digits}f}{unit} "
            f"(from {ordered[0]:.{digits}f} to {ordered[-1]:.{digits}f}{unit})"
        )

    print(f"-- {len(results)} runs")
    ratios = [times_the_engine(r) for r in results]
    print(f"times the engine: {', '.join(f'{x:.1f}' for x in ratios)}; {spread(ratios)}")
    print(f"engine alone: {spread([r['engine_ms'] for r in results], ' ms', 2)}")
    if all(r["drain"] for r in results):
        print(f"drain: {spread([r['drain'] for r in results], ' records/s', 0)}")
    print(f"p95 submission to verified: {spread([r['p95_ms'] for r in results], ' ms', 0)}")
    print(f"p95 submission to rated: {spread([r['rated_p95_ms'] for r in results], ' ms', 0)}")


if __name__ == "__main__":
    main()
