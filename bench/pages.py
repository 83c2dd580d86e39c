"""Public standings page under concurrent load: requests per second and 95th-percentile latency.

Builds a public tournament with one round-robin group of 64 lines, every one of its 2,016 matches
played, in a throwaway copy of the configured database (PostgreSQL: gunicorn's workers must see
it), serves it with gunicorn on 127.0.0.1 (a free port, loopback only), and loads the group's
standings page from a thread pool with a bounded number of requests and a time limit:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench .venv/bin/python bench/pages.py

Three measurements: the page as a crowd sees it (fragment cached, one query per request), the
same with ``If-None-Match`` (304 answers), and the page built from scratch (cache cleared before
each request, one client, in-process), which is the cost of the first request after a result.
"""

import argparse
import concurrent.futures
import http.client
import importlib.util
import os
import random
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import logging  # noqa: E402

from django.db import connection  # noqa: E402
from machine import cpu_model, database_url, free_port, load_average, wait_for  # noqa: E402

logging.disable(logging.INFO)


def _standings_builder():
    """``build(n_lines, group_size, rng)`` of bench/standings.py (bulk-inserted results)."""
    spec = importlib.util.spec_from_file_location(
        "bench_standings", ROOT / "bench" / "standings.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build


def get(port, path, headers=None):
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        response.read()
        status = response.status
        etag = response.getheader("ETag")
    finally:
        conn.close()
    return status, (time.perf_counter() - started) * 1000, etag


def load(port, path, *, requests, concurrency, time_limit, headers=None):
    """Fire at most ``requests`` GETs from ``concurrency`` threads, stopping at ``time_limit``."""
    deadline = time.monotonic() + time_limit
    latencies, errors = [], 0

    def worker(n):
        nonlocal errors
        done = []
        for _ in range(n):
            if time.monotonic() > deadline:
                break
            status, ms, _etag = get(port, path, headers)
            if status not in (200, 304):
                errors += 1
            done.append(ms)
        return done

    per_thread = [requests // concurrency] * concurrency
    for i in range(requests % concurrency):
        per_thread[i] += 1
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for done in pool.map(worker, per_thread):
            latencies.extend(done)
    elapsed = time.perf_counter() - started
    latencies.sort()
    p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
    return {
        "requests": len(latencies),
        "errors": errors,
        "rps": len(latencies) / elapsed,
        "p50": statistics.median(latencies),
        "p95": p95,
        "seconds": elapsed,
    }


def cold_renders(path, repeat):
    """In-process: clear the cache, then render the page (what a result entry costs once)."""
    from django.core.cache import cache
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    # the host gunicorn is asked for below: the test client's default, "testserver", is not in
    # ALLOWED_HOSTS outside the test runner (DisallowedHost)
    client = Client(HTTP_HOST="127.0.0.1")
    times, queries = [], 0
    for _ in range(repeat):
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            assert client.get(path).status_code == 200
            times.append((time.perf_counter() - started) * 1000)
        queries = len(captured)
    return queries, statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="bounded request count")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per load run")
    args = parser.parse_args()
    if connection.vendor == "sqlite":
        raise SystemExit("bench/pages.py needs PostgreSQL in DATABASE_URL (gunicorn shares it)")

    from django.urls import reverse

    from tournaments.models import Group, Tournament

    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    server = None
    try:
        started = time.perf_counter()
        tournament, stage, n_matches = _standings_builder()(64, 64, random.Random(2026))
        Tournament.objects.filter(pk=tournament.pk).update(
            is_public=True, status=Tournament.Status.RUNNING
        )
        group = Group.objects.get(stage=stage)
        path = reverse("public:group", args=[tournament.slug, group.pk])
        print(
            f"database {connection.vendor} {test_name}: group of 64 lines, {n_matches} matches "
            f"(built in {time.perf_counter() - started:.1f} s)"
        )
        q, median, best = cold_renders(path, 5)
        print(
            f"cold page (cache cleared, in-process): {q} queries, {median:.1f} ms median, "
            f"{best:.1f} ms best"
        )

        port = free_port()
        env = dict(os.environ, DATABASE_URL=database_url(test_name), CONN_MAX_AGE="60")
        # gunicorn (config.wsgi) refuses to start without a key: a throwaway one for this run
        env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi",
             "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers),
             "--threads", str(args.threads), "--log-level", "warning"],
            cwd=ROOT, env=env,
        )  # fmt: skip
        wait_for(port, time.monotonic() + 30, "gunicorn")
        status, _ms, etag = get(port, path, {"Accept-Language": "it"})
        assert status == 200, status
        for _ in range(20):  # warm every worker's cache and connection
            get(port, path, {"Accept-Language": "it"})
        print(
            f"gunicorn 127.0.0.1:{port}, {args.workers} workers x {args.threads} threads; "
            f"{args.concurrency} concurrent clients, at most {args.requests} requests"
        )
        for label, headers in (
            ("cached page (200)", {"Accept-Language": "it"}),
            ("revalidation (304)", {"Accept-Language": "it", "If-None-Match": etag}),
        ):
            r = load(
                port,
                path,
                requests=args.requests,
                concurrency=args.concurrency,
                time_limit=args.time_limit,
                headers=headers,
            )
            print(
                f"{label}: {r['requests']} requests in {r['seconds']:.1f} s, "
                f"{r['rps']:.0f} req/s, p50 {r['p50']:.1f} ms, p95 {r['p95']:.1f} ms, "
                f"errors {r['errors']}"
            )
        print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {load_average()} at the end")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        connection.creation.destroy_test_db(old_name, verbosity=0)
        print(f"dropped {test_name}")


if __name__ == "__main__":
    main()
