"""Records per second from submission to verified, with two Celery worker processes.

Needs PostgreSQL and Redis:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/4 .venv/bin/python bench/pipeline.py --records 600

It creates a throwaway ``test_<name>`` database, a tournament whose group has enough lines for
``--records`` matches, simulated legal records (2-player scopa to 11), starts
``celery -A config worker --pool prefork -c 2`` on that database, submits every record through
``games.services.submit_record`` (the API's code path without HTTP) as fast as one process can,
and waits until all are verified. Latency is ``verified_at - submitted_at`` per submission;
throughput is records over the time from the first submission to the last verification.
"""

import argparse
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import logging  # noqa: E402

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

logging.disable(logging.WARNING)


def database_url(name):
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{db.get('USER') or 'postgres'}{password}@{db.get('HOST') or '127.0.0.1'}:"
        f"{db.get('PORT') or 5432}/{name}"
    )


def start_worker(db_name, logfile):
    env = dict(os.environ, DATABASE_URL=database_url(db_name), LOG_LEVEL="WARNING")
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
        "2",
        "-n",
        "bench@%h",
        "--without-gossip",
        "--without-mingle",
        "-l",
        "WARNING",
    ]
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True
    )


def percentile(values, p):
    ordered = sorted(values)
    k = max(0, math.ceil(p / 100 * len(ordered)) - 1)
    return ordered[k]


def run(n_records, lines, rate):
    from games import services
    from games.models import Submission
    from tests.api import factories

    n_lines = lines or next(n for n in range(2, 200) if n * (n - 1) // 2 >= n_records)
    organizer = factories.user("bench", is_staff=True)
    tournament = factories.tournament(lines=n_lines, organizer=organizer)
    matches = factories.matches(tournament)[:n_records]
    records = [factories.record(tournament, seed=i) for i in range(len(matches))]
    size = sum(len(str(r)) for r in records) / len(records)
    print(f"{len(matches)} matches, {n_lines} lines, records ~{size / 1024:.1f} KiB each")

    t0 = time.perf_counter()
    for index, (match, record) in enumerate(zip(matches, records, strict=True)):
        if rate:
            delay = t0 + index / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        services.submit_record(match, record, user=organizer)
    submit_s = time.perf_counter() - t0
    print(f"submitted in {submit_s:.2f} s ({len(matches) / submit_s:.0f} records/s)")
    deadline = time.monotonic() + 600
    while Submission.objects.filter(state="pending").exists():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the workers")
        time.sleep(0.1)
    subs = list(Submission.objects.values_list("state", "submitted_at", "verified_at"))
    states = {s for s, _a, _b in subs}
    first = min(a for _s, a, _b in subs)
    last = max(b for _s, _a, b in subs)
    wall = (last - first).total_seconds()
    latencies = [(b - a).total_seconds() for _s, a, b in subs]
    return {
        "records": len(subs),
        "states": sorted(states),
        "submit_rate": len(subs) / submit_s,
        "throughput": len(subs) / wall,
        "median_ms": statistics.median(latencies) * 1000,
        "p95_ms": percentile(latencies, 95) * 1000,
        "max_ms": max(latencies) * 1000,
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
    args = parser.parse_args()
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise SystemExit("set DATABASE_URL to a PostgreSQL database")
    if not settings.CELERY_BROKER_URL:
        raise SystemExit("set CELERY_BROKER_URL to a Redis broker")
    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    log_path = Path("/tmp") / f"bench-pipeline-worker-{os.getpid()}.log"
    with log_path.open("wb") as log:
        worker = start_worker(test_name, log)
        try:
            time.sleep(3)  # let the worker connect before the clock starts
            result = run(args.records, args.lines, args.rate)
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(30)
            connection.creation.destroy_test_db(old_name, verbosity=0)
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    print(f"machine: {cpu}, {os.cpu_count()} cores")
    print(f"states: {result['states']}")
    print(f"records: {result['records']}, submitted at {result['submit_rate']:.0f}/s")
    print(
        f"throughput, first submission to last verification: {result['throughput']:.1f} records/s"
    )
    print(
        f"latency submission -> verified: median {result['median_ms']:.0f} ms, "
        f"p95 {result['p95_ms']:.0f} ms, max {result['max_ms']:.0f} ms"
    )


if __name__ == "__main__":
    main()
