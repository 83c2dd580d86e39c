"""The phones at a venue: every request one result costs, its CPU and its queries, in process.

Builds, in a throwaway copy of the configured database, the open of ``bench/venue.py`` (1,000
lines, a round of 500 tables, each playing line its private link) and enters ``--results``
results through the phone pages with Django's test client, as the sheet's scripts make the
requests (``public/static/js/table-sheet.js``, ``table-app.js``, ``table-outbox.js``): the home
side opens its card's link, the service worker and the manifest, the sheet; the script's
calls while the deal is typed (``--typing-calls``: ``/check/`` or ``/draft/``, as that tree's
script sends them), the outbox's ``/sync/``, the sheet again (the page reloads once sent), the
status polls while it waits; the away side opens its link, the sheet, countersigns (the form's
POST) and sees the sheet again. Then per kind of request: how many a result, this process's
CPU (``time.process_time``: Django, the client, the test client's own work) and the CPU of
its PostgreSQL backend (``/proc``), and the queries. CPU time holds on a loaded machine where
wall clock does not; run it over two trees side by side to compare them. ``--waiting N``: N
other tables' sheets wait for their countersignature all along, as in a round in full swing.
``PHONES_SQL=KIND`` prints the queries of that kind of request, ``PHONES_PROFILE=KIND`` its
profile (cProfile over all of them, ``all``: every request; cumulative, then own time).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench CACHE_URL=redis://…/6 \\
    CELERY_BROKER_URL=redis://…/6 CHANNEL_LAYER_URL=redis://…/6 \\
    .venv/bin/python bench/phones.py --results 60 --typing-calls check:7 --polls 2
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import importlib.util
import json
import os
import pstats
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
REPORT = re.compile(r'name="report" value="(\d+)"')
# The deal of bench/venue.py, as the page types it: field by field, as text.
TYPED = [
    ("0", "scope", "7"),
    ("0", "carte", "1"),
    ("0", "denari", "1"),
    ("0", "settebello", "1"),
    ("0", "primiera", "1"),
    ("1", "scope", "4"),
]


def _venue():
    spec = importlib.util.spec_from_file_location("bench_venue", ROOT / "bench" / "venue.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_venue"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def backend_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def typed_deals(upto: int) -> list[dict]:
    """The sheet as the script holds it after ``upto`` fields: one deal, text values."""
    breakdown: list[dict[str, str]] = [{}, {}]
    for side, key, value in TYPED[:upto]:
        breakdown[int(side)][key] = value
    return [{"breakdown": breakdown, "tiebreak": False, "last_capture": None}]


class Meter:
    def __init__(self, pid: int) -> None:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        self.pid = pid
        self.capture = CaptureQueriesContext(connection)
        self.rows: dict[str, list[tuple[float, float, int, int]]] = collections.defaultdict(list)
        # PHONES_PROFILE=KIND: cProfile over every request of that kind, printed at the end
        self.profiled = os.environ.get("PHONES_PROFILE")
        self.profile = cProfile.Profile() if self.profiled else None

    def __call__(self, kind: str, call, *args, **kwargs):
        before_db = backend_cpu(self.pid)
        with self.capture:
            started = time.process_time()
            if self.profile is not None and self.profiled in (kind, "all"):
                response = self.profile.runcall(call, *args, **kwargs)
            else:
                response = call(*args, **kwargs)
            spent = time.process_time() - started
        if os.environ.get("PHONES_SQL") == kind:
            for query in self.capture.captured_queries:
                print(f"  {kind}: {query['sql']}")
        self.rows[kind].append(
            (spent, backend_cpu(self.pid) - before_db, len(self.capture), len(response.content))
        )
        if response.status_code >= 400:
            raise SystemExit(f"{kind}: {response.status_code} {response.content[:300]!r}")
        return response


def waiting_sheets(count: int, cards) -> None:
    """``count`` tables outside ``cards``, each with the home side's sheet sent and waiting for
    the other side's signature (through the service: their requests are not measured)."""
    import uuid

    from scoresheets.services import links, reports
    from tournaments.models import Match, Outcome

    first = Match.objects.select_related("round").get(pk=cards[0].match_id)
    taken = {card.match_id for card in cards}
    others = (
        Match.objects.filter(round=first.round, home__isnull=False, away__isnull=False)
        .exclude(outcome=Outcome.BYE)
        .exclude(pk__in=taken)
        .select_related("home", "round__stage__tournament")
        .order_by("table_number")[:count]
    )
    if len(others) < count:
        raise SystemExit(f"{count} waiting sheets asked, {len(others)} other tables")
    for match in others:
        link = links.link_for(match.round.stage.tournament, match.home)
        reports.submit(link, match, typed_deals(len(TYPED)), client_key=uuid.uuid4())


def one_result(meter: Meter, clients, card, typing: str, calls: int, polls: int) -> None:
    from http.cookies import SimpleCookie

    json_type = {"content_type": "application/json"}
    home, away = clients  # kept (their handler's set-up is not a request's), fresh cookies
    home.cookies, away.cookies = SimpleCookie(), SimpleCookie()
    mid = card.match_id
    meter("open link", home.get, f"/p/{card.home_token}/")
    meter("service worker", home.get, "/p/sw.js")
    meter("manifest", home.get, f"/p/k{card.home_link}/manifest.webmanifest")
    sheet = f"/p/k{card.home_link}/m/{mid}/"
    page = meter("sheet page", home.get, sheet).content.decode()
    client_key = re.search(r'data-client-key="([^"]+)"', page).group(1)
    for index in range(calls):
        # the calls are spread over the fields typed, the last one with the whole deal
        upto = len(TYPED) if calls == 1 else round(index * len(TYPED) / (calls - 1))
        body = {"deals": typed_deals(upto), "time_expired": False}
        meter(typing, home.post, f"{sheet}{typing}/", json.dumps(body), **json_type)
    sent = {
        "deals": typed_deals(len(TYPED)),
        "client_key": client_key,
        "based_on": "",
        "lines": None,
        "time_expired": False,
        "code": "",
        "queued": False,
    }
    answer = meter("sync", home.post, f"{sheet}sync/", json.dumps(sent), **json_type)
    if answer.json().get("status") != "waiting":
        raise SystemExit(f"sync: {answer.content!r}")
    meter("sheet page", home.get, sheet)
    for _ in range(polls):
        meter("status poll", home.get, f"{sheet}status/", {"key": client_key})

    meter("open link", away.get, f"/p/{card.away_token}/")
    meter("service worker", away.get, "/p/sw.js")
    meter("manifest", away.get, f"/p/k{card.away_link}/manifest.webmanifest")
    other = f"/p/k{card.away_link}/m/{mid}/"
    page = meter("sheet page", away.get, other).content.decode()
    form = {"action": "accept", "csrfmiddlewaretoken": CSRF.search(page).group(1)}
    form["report"] = REPORT.search(page).group(1)
    signed = meter("countersign", away.post, other, form)
    if signed.status_code != 302:
        raise SystemExit(f"countersign: {signed.status_code}")
    meter("sheet page", away.get, signed.headers["Location"])
    # the home phone's next poll sees it countersigned
    meter("status poll", home.get, f"{sheet}status/", {"key": client_key})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--results", type=int, default=60)
    parser.add_argument(
        "--typing-calls",
        default="check:7",
        help="the script's calls while the deal is typed, URL:count (check:7 = one at the "
        "page's start and one after each of the six fields; draft:2 = the first change, "
        "then once the typing pauses)",
    )
    parser.add_argument("--polls", type=int, default=2, help="status polls while waiting")
    parser.add_argument(
        "--waiting",
        type=int,
        default=0,
        help="other tables whose sheet waits for the other side all along (a round in full "
        "swing: what a card must not pay for)",
    )
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    typing, calls = args.typing_calls.split(":")

    import django

    django.setup()
    import logging

    from django.conf import settings
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import setup_test_environment
    from machine import cpu_model, engine_build, load_average

    logging.disable(logging.INFO)
    setup_test_environment()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "table-link": "100000/min",
        },
    }
    venue = _venue()
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_phonesbench"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        cache.clear()
        started = time.perf_counter()
        _path, cards = venue.build_open(args.lines, args.results, random.Random(args.seed))
        print(
            f"open of {args.lines} lines, {len(cards)} results "
            f"(built in {time.perf_counter() - started:.1f} s); {load_average()}",
            flush=True,
        )
        if args.waiting:
            waiting_sheets(args.waiting, cards)
            print(f"{args.waiting} other tables' sheets awaiting the other side", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        meter = Meter(pid)
        from django.test import Client

        clients = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
        started, cpu0 = time.perf_counter(), time.process_time()
        for card in cards:
            one_result(meter, clients, card, typing, int(calls), args.polls)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
        n = len(cards)
        backend = settings.CACHES["default"]["BACKEND"]
        print(f"{n} results in {wall:.1f} s; {load_average()}; cache {backend}")
        print(f"{'request':<16}{'a result':>9}{'CPU ms':>9}{'PG ms':>8}{'queries':>9}{'KB':>7}")
        totals = [0.0, 0.0, 0.0, 0.0]
        for kind, rows in meter.rows.items():
            each = len(rows) / n
            cpu_ms = statistics.median(r[0] for r in rows) * 1000
            pg_ms = statistics.mean(r[1] for r in rows) * 1000
            queries = statistics.mean(r[2] for r in rows)
            kb = statistics.mean(r[3] for r in rows) / 1024
            totals[0] += each
            totals[1] += sum(r[0] for r in rows) / n * 1000
            totals[2] += sum(r[1] for r in rows) / n * 1000
            totals[3] += sum(r[2] for r in rows) / n
            print(f"{kind:<16}{each:>9.1f}{cpu_ms:>9.1f}{pg_ms:>8.1f}{queries:>9.1f}{kb:>7.1f}")
        print(
            f"{'a result':<16}{totals[0]:>9.1f}{totals[1]:>9.1f}{totals[2]:>8.1f}{totals[3]:>9.1f}"
            "   (CPU: mean a result, the rows above: median a request; PG: mean)"
        )
        print(f"whole loop: {cpu / n * 1000:.1f} ms CPU a result in this process")
        if meter.profile is not None and not meter.profile.getstats():
            print(f"PHONES_PROFILE={meter.profiled!r} names no kind of request above")
        if meter.profile is not None and meter.profile.getstats():
            stats = pstats.Stats(meter.profile).strip_dirs()
            stats.sort_stats("cumulative").print_stats(60)
            stats.sort_stats("tottime").print_stats(25)
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"machine: {cpu_model()}, engine {engine_build()}; {when}")
    finally:
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        print(f"dropped {test_name}")


if __name__ == "__main__":
    main()
