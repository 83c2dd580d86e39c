"""Records accepted per second through the API (``POST /api/v1/matches/<id>/records/``).

The goal: the API accepts at least 200 records a second on this machine, timed on its own
(no worker verifies while it runs: the messages wait in the broker). This serves a throwaway copy
of the configured PostgreSQL database with gunicorn on loopback and posts one legal record per
match (2-player scopa to 11, about 8 KiB of JSON) from a pool of client threads, each on a
keep-alive connection, as an online platform's account (the organizer's API token):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/5 CACHE_URL=redis://127.0.0.1:6379/6 \
        .venv/bin/python bench/submission.py --records 1000

It reports requests per second, p50/p95 latency, the CPU per record of the gunicorn processes
and of the database's backends (from ``/proc``), and, in-process, the queries of one
submission. The record-submission throttle is raised for the run (a platform's account would
have its own rate; see ``THROTTLE_RECORD_SUBMISSION``).
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# a platform's account has a rate of its own; the run is not about the throttle
os.environ["THROTTLE_RECORD_SUBMISSION"] = "1000000/min"
os.environ["THROTTLE_RECORD_BATCH"] = "1000000/min"

import django  # noqa: E402

django.setup()

import logging  # noqa: E402

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from machine import cpu_model, database_url, free_port, load_average, wait_for  # noqa: E402
from pipeline import backend_pids, cpu_seconds, group_pids, percentile  # noqa: E402

logging.disable(logging.WARNING)


def post_all(port, jobs, token, concurrency):
    """Post every (path, body) of ``jobs`` from ``concurrency`` keep-alive connections."""
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    chunks = [jobs[i::concurrency] for i in range(concurrency)]

    def worker(chunk):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        done, statuses = [], []
        try:
            for path, body in chunk:
                started = time.perf_counter()
                conn.request("POST", path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                done.append((time.perf_counter() - started) * 1000)
                statuses.append(response.status)
        finally:
            conn.close()
        return done, statuses

    latencies, statuses = [], []
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for done, codes in pool.map(worker, chunks):
            latencies.extend(done)
            statuses.extend(codes)
    return latencies, statuses, time.perf_counter() - started


def queries_of_one(tournament, organizer, match, record):
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from rest_framework.authtoken.models import Token

    token = Token.objects.get(user=organizer)
    client = Client(HTTP_AUTHORIZATION=f"Token {token.key}", HTTP_HOST="127.0.0.1")
    with CaptureQueriesContext(connection) as captured:
        response = client.post(
            f"/api/v1/matches/{match.pk}/records/", json.dumps(record), "application/json"
        )
    assert response.status_code == 202, response.content[:300]
    return len(captured)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8, help="client threads")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=2, help="threads per gunicorn worker")
    parser.add_argument(
        "--batch",
        type=int,
        default=0,
        help="records per request through POST /api/v1/records/ (0: one per request)",
    )
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("set DATABASE_URL to a PostgreSQL database (gunicorn shares it)")
    if not settings.CELERY_BROKER_URL or settings.CELERY_TASK_ALWAYS_EAGER:
        raise SystemExit("set CELERY_BROKER_URL: the records wait there, unverified")

    from rest_framework.authtoken.models import Token

    from tests.api import factories

    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    server = None
    try:
        n_lines = next(n for n in range(2, 400) if n * (n - 1) // 2 >= args.records + 21)
        organizer = factories.user("bench", is_staff=True)
        token = Token.objects.create(user=organizer).key
        tournament = factories.tournament(lines=n_lines, organizer=organizer)
        matches = factories.matches(tournament)[: args.records + 21]
        records = [factories.record(tournament, seed=i) for i in range(len(matches))]
        extra = queries_of_one(tournament, organizer, matches[-1], records[-1])
        jobs = [
            (f"/api/v1/matches/{m.pk}/records/", json.dumps(r).encode())
            for m, r in zip(matches[:-1], records[:-1], strict=True)
        ]
        warm, jobs = jobs[:20], jobs[20 : 20 + args.records]
        size = sum(len(body) for _path, body in jobs) / len(jobs)
        print(f"{len(jobs)} records of {size / 1024:.1f} KiB, {n_lines} lines")
        n_records = len(jobs)
        if args.batch:
            named = [
                {**r, "match": m.pk} for m, r in zip(matches[20:-1], records[20:-1], strict=True)
            ][: args.records]
            jobs = [
                ("/api/v1/records/", json.dumps(named[i : i + args.batch]).encode())
                for i in range(0, len(named), args.batch)
            ]
            print(f"in {len(jobs)} requests of up to {args.batch} records (POST /api/v1/records/)")

        port = free_port()
        env = dict(
            os.environ,
            DATABASE_URL=database_url(test_name),
        )
        env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi",
             "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers),
             "--worker-class", "gthread", "--threads", str(args.threads),
             "--log-level", "warning"],
            cwd=ROOT, env=env, start_new_session=True,
        )  # fmt: skip
        wait_for(port, time.monotonic() + 30, "gunicorn")
        post_all(port, warm, token, min(args.concurrency, len(warm)))  # connections, imports
        server_before = cpu_seconds(group_pids(server.pid))
        pg_before = cpu_seconds(backend_pids())
        latencies, statuses, seconds = post_all(port, jobs, token, args.concurrency)
        server_cpu = cpu_seconds(group_pids(server.pid)) - server_before
        pg_cpu = cpu_seconds(backend_pids()) - pg_before
        codes = {code: statuses.count(code) for code in sorted(set(statuses))}
        jobs = range(n_records)  # per record from here on, whatever the requests held
        print(
            f"gunicorn 127.0.0.1:{port}, {args.workers} workers x {args.threads} threads, "
            f"{args.concurrency} client threads"
        )
        print(f"answers: {codes}")
        print(
            f"accepted {len(jobs) / seconds:.0f} records/s; request latency p50 "
            f"{statistics.median(latencies):.1f} ms, p95 {percentile(latencies, 95):.1f} ms"
        )
        print(
            f"CPU per record: gunicorn {server_cpu / len(jobs) * 1000:.1f} ms, "
            f"PostgreSQL {pg_cpu / len(jobs) * 1000:.1f} ms; queries per submission {extra}"
        )
        print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {load_average()} at the end")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
