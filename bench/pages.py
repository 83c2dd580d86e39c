"""Public pages under concurrent load, side by side with a static file of the same server.

Builds, in a throwaway copy of the configured database (PostgreSQL: gunicorn's workers must see
it), a public tournament with one round-robin group of 64 lines (2,016 matches played) and a
1,000-line open (a Danish stage, its first round of 500 tables half played); serves them with
gunicorn on 127.0.0.1 (a free port, loopback only) and loads, with wrk (Debian's ``wrk``), in
one run: a static file (``/static/css/site.css``, whitenoise), the 64-line standings, the
1,000-line standings and the 500-table round page, each as a crowd sees it (200 from the cache)
and revalidated (``If-None-Match``, 304):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench .venv/bin/python bench/pages.py

Before that, in-process: each page built from scratch (cache cleared: the first request after a
deploy) and the round page rebuilt after one result (its other rows cached: what a result costs).
Without wrk the thread-pool client below loads the 64-line standings only (slower: it shares the
interpreter lock).
"""

import argparse
import concurrent.futures
import datetime
import http.client
import importlib.util
import os
import random
import re
import secrets
import shutil
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


def build_open(n_lines, rng):
    """A public 1,000-line open: a Danish stage, its first round paired (n/2 tables), half of
    the tables with a result (bulk-inserted, as bench/standings.py does)."""
    from tournaments.algorithms import vp as vp_algo
    from tournaments.models import Match, MatchResult, Outcome, Stage
    from tournaments.services import entries, pairing, presets
    from tournaments.services.vp import vp_table_from_model

    tournament = presets.create_tournament_from_preset(
        "scopa-classica-11",
        name=f"Open {n_lines}",
        start_date=datetime.date(2026, 1, 1),
        stages=[{"name": "Open", "kind": Stage.Kind.DANISH}],
    )
    entries.add_lines(
        tournament,
        [
            entries.LineRow(name=f"O{n_lines}-{i}", players=[(f"Q{n_lines}-{i}", "")], row_number=i)
            for i in range(n_lines)
        ],
    )
    stage = tournament.stages.get()
    round_ = pairing.pair_next_round(stage)
    table = vp_table_from_model(tournament.vp_table)
    played, rows = [], []
    matches = Match.objects.filter(round=round_).exclude(outcome=Outcome.BYE).order_by("id")
    for match in list(matches)[::2]:
        home, away = 11 + rng.randint(0, 4), rng.randint(0, 10)
        score = vp_algo.match_score(table, home - away)
        for line, points, won in ((match.home_id, home, True), (match.away_id, away, False)):
            rows.append(
                MatchResult(
                    match_id=match.pk,
                    line_id=line,
                    points=points,
                    vp=score.vp_winner if won else score.vp_loser,
                    mp=score.mp_winner if won else score.mp_loser,
                    won=won,
                )
            )
        match.winner_id, match.status, match.outcome = match.home_id, Match.Status.DONE, "completed"
        played.append(match)
    Match.objects.bulk_update(played, ["winner", "status", "outcome"], batch_size=2000)
    MatchResult.objects.bulk_create(rows, batch_size=2000)
    return tournament, stage, round_


def wrk(port, path, *, seconds, connections, headers=None):
    """requests/s, p50 and p99 in ms, bytes per answer (wrk's own figures)."""
    command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run(
        [*command, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    ).stdout

    def ms(label):
        found = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(found.group(1)), found.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = re.search(r"(\d+) requests in", out).group(1)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    read = re.search(r"requests in [\d.]+\w+, ([\d.]+)([KMG]?B) read", out)
    scale = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[read.group(2)]
    return {
        "kb": float(read.group(1)) * scale / max(int(total), 1) / 1024,
        "rps": rps,
        "p50": ms("50"),
        "p99": ms("99"),
        "requests": int(total),
        "errors": int(errors.group(1)) if errors else 0,
    }


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


def after_one_result(round_path, matches, entered):
    """In-process: the round page warm, then one result entered through the service (its
    commit forgets the page's stamp), then the page again: only the changed row is rendered."""
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tournaments.services import results

    client = Client(HTTP_HOST="127.0.0.1")
    times, queries = [], 0
    for match in matches:
        assert client.get(round_path).status_code == 200
        results.enter_result(match, entered)
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            assert client.get(round_path).status_code == 200
            times.append((time.perf_counter() - started) * 1000)
        queries = len(captured)
    return queries, statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="thread client: bounded count")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent connections")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--time-limit", type=float, default=60.0, help="thread client: seconds")
    parser.add_argument("--seconds", type=int, default=10, help="wrk: seconds per load run")
    parser.add_argument("--runs", type=int, default=1, help="wrk: rounds over every target")
    parser.add_argument("--open-lines", type=int, default=1000, help="lines of the open")
    args = parser.parse_args()
    if connection.vendor == "sqlite":
        raise SystemExit("bench/pages.py needs PostgreSQL in DATABASE_URL (gunicorn shares it)")

    from django.urls import reverse

    from tournaments.models import Group, Match, Tournament

    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    server = None
    try:
        started = time.perf_counter()
        tournament, stage, n_matches = _standings_builder()(64, 64, random.Random(2026))
        group = Group.objects.get(stage=stage)
        path = reverse("public:group", args=[tournament.slug, group.pk])
        open_t, open_stage, round_ = build_open(args.open_lines, random.Random(2026))
        Tournament.objects.filter(pk__in=[tournament.pk, open_t.pk]).update(
            is_public=True, status=Tournament.Status.RUNNING
        )
        tables = Match.objects.filter(round=round_).count()
        targets = {
            "static file": "/static/css/site.css",
            "standings, 64 lines": path,
            f"standings, {args.open_lines} lines": reverse(
                "public:stage", args=[open_t.slug, open_stage.pk]
            ),
            f"round page, {tables} tables": reverse("public:round", args=[open_t.slug, round_.pk]),
        }
        print(
            f"database {connection.vendor} {test_name}: group of 64 lines, {n_matches} matches; "
            f"open of {args.open_lines} lines, round of {tables} tables "
            f"(built in {time.perf_counter() - started:.1f} s)"
        )
        for label, target in list(targets.items())[1:]:
            q, median, best = cold_renders(target, 3)
            print(
                f"cold {label} (cache cleared, in-process): {q} queries, {median:.1f} ms median, "
                f"{best:.1f} ms best"
            )
        waiting = list(
            Match.objects.filter(round=round_, status=Match.Status.SCHEDULED)
            .exclude(away__isnull=True)
            .order_by("id")[:5]
        )
        entered = [{"points": [11, 4], "breakdown": [{"scope": 7, **dict.fromkeys(
            ("carte", "denari", "settebello", "primiera"), 1)}, {"scope": 4}]}]  # fmt: skip
        q, median, best = after_one_result(
            targets[f"round page, {tables} tables"], waiting, entered
        )
        print(
            f"round page after one result (other rows cached, in-process): {q} queries, "
            f"{median:.1f} ms median, {best:.1f} ms best ({len(waiting)} results)"
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
        etags = {}
        for label, target in targets.items():
            status, _ms, etag = get(port, target, {"Accept-Language": "it"})
            assert status == 200, (label, status)
            etags[label] = etag
            for _ in range(20):  # warm every worker's cache and connection
                get(port, target, {"Accept-Language": "it"})
        print(
            f"gunicorn 127.0.0.1:{port}, {args.workers} workers x {args.threads} threads; "
            f"{args.concurrency} concurrent connections"
        )
        if shutil.which("wrk"):
            for run, (label, target) in (
                (run, item) for run in range(1, args.runs + 1) for item in targets.items()
            ):
                for kind, headers in (
                    ("200", {"Accept-Language": "it"}),
                    ("200 gzip", {"Accept-Language": "it", "Accept-Encoding": "gzip"}),
                    ("304", {"Accept-Language": "it", "If-None-Match": etags[label] or ""}),
                ):
                    r = wrk(
                        port,
                        target,
                        seconds=args.seconds,
                        connections=args.concurrency,
                        headers=headers,
                    )
                    print(
                        f"run {run} wrk {label} ({kind}): {r['rps']:.0f} req/s, "
                        f"p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, {r['requests']} requests, "
                        f"{r['kb']:.1f} KB each, "
                        f"non-2xx/3xx {r['errors']}; load {load_average()}"
                    )
        else:
            print("wrk not found (apt-get install wrk): the thread client, 64-line standings")
            for label, headers in (
                ("cached page (200)", {"Accept-Language": "it"}),
                ("revalidation (304)", {"Accept-Language": "it", "If-None-Match": etags[
                    "standings, 64 lines"]}),
            ):  # fmt: skip
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
