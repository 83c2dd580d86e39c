"""A round at a venue: results from the players' phones, on every spectator's screen.

The goal of issue 32 as one command. In a throwaway copy of the configured PostgreSQL database
it builds a public open of ``--lines`` lines (default 1,000) and pairs its first round (500
tables), issues each playing line its private link, and starts the real servers on loopback:
gunicorn (``config.wsgi``, ``--processes`` workers x ``--threads`` threads), ``--processes``
push processes (``python -m config.push``, uvicorn; ``--push daphne`` for daphne; no proxy in
front: the spectators are spread over their ports round-robin) and one Celery worker (the phone
path itself enqueues nothing, but each result enqueues the rating update, which a venue's worker
runs meanwhile). PostgreSQL and Redis (channel layer, cache, broker) are the environment's.

Then, at a pace (``--pace window``: ``--results`` results spread over ``--window-s`` seconds,
500 in 600 s by default; ``burst``: 300 in 180 s; ``max``: as fast as ``--phones`` phones go),
each result goes through the phone HTTP path with ``requests`` sessions holding the link
cookies, in a process of its own: the home side opens its card's link (the token traded for
the cookie), opens the sheet, posts ``/check/`` ``--checks`` times (the sheet's script tells the
server its draft at the first change and when the typing pauses) and sends the sheet as the
page's outbox does (``/sync/``, then the sheet again); the away side opens its link and the sheet
and countersigns it (the form's POST, redirect followed).

Meanwhile ``--spectators`` simulated screens hold the public round page. Each behaves as
``public/static/js/live.js`` does there: it loads the page, opens the socket (``?lang=it``), on
open fetches its fragment once; on a message, when the version follows the one it holds it
swaps the pushed rows in place, otherwise it fetches the fragment (``HX-Request``,
``Cache-Control: max-age=0``, ``If-None-Match`` its last ETag; one request in flight plus one
after it); while the socket is down it polls with jitter and reconnects with a jittered,
doubling wait. Its "screen" is the rows it holds (an id -> content map).

What it reports, per result: **countersign -> content on screen**, from the moment the away
phone sends its countersignature to the moment a spectator holds the row's final content (the
exact text the round page shows at the end of the run, applied from a pushed row or from a
refetched fragment; the time to lay the page out in a browser is not in it); p50/p95/max over
every (result, spectator) pair, and the socket message's own arrival beside it. A pair that
never holds the final content ``--drain-s`` seconds after the last result is a **missing
delivery**. Also: the phone requests' times (each save's p95), bytes per result per spectator
(WebSocket payloads plus HTTP responses as they came on the wire), failed handshakes, CPU
seconds per process from the first result until every screen holds the last one (gunicorn,
the push, the worker, the PostgreSQL backends of the bench's database, the whole Redis server,
shared with other users, the spectators' process, the phones' process), the push's memory per
socket, and the load average at start and end. Every client runs on the same two cores as the
servers: read their CPU beside the servers'.

``--chromium M`` adds M real pages in headless Chromium, each renderer held to a quarter of a
core as a phone's (a cgroup CPU quota, ``CpuCap``; not DevTools' throttling, which spins),
reporting when the new row is in their DOM and where their main thread's CPU went. No proxy
routes ``/ws/`` here, so the push serves those pages whole (``config.asgi`` serves HTTP too).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \\
    CHANNEL_LAYER_URL=redis://127.0.0.1:6379/9 CACHE_URL=redis://127.0.0.1:6379/10 \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/11 \\
    .venv/bin/python bench/venue.py --spectators 200 --results 60 --pace burst
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import multiprocessing
import os
import random
import re
import resource
import secrets
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

PACES = {"window": (500, 600.0), "burst": (300, 180.0), "max": (500, 0.0)}
LANG = "it"
ROW = re.compile(r'<tr id="(m-\d+)"[^>]*>.*?</tr>', re.S)
VERSION = re.compile(r'data-live-version="(\d*)"')
POLL = re.compile(r'hx-trigger="every (\d+(?:\.\d+)?)s"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
REPORT = re.compile(r'name="report" value="(\d+)"')
# One deal that ends a game to 11: the home side 11 (seven scope, the four categories, then
# four scope), the away side 4.
DEAL = {
    "breakdown": [
        {"scope": 7, "carte": 1, "denari": 1, "settebello": 1, "primiera": 1},
        {"scope": 4},
    ]
}


# --------------------------------------------------------------------------- measuring


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    """The process and its descendants (gunicorn's and Celery's workers)."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                found.extend(children(int(child)))
    return found


def redis_pid(url: str) -> int | None:
    """The redis-server listening on the URL's port (shared with others on this machine)."""
    port = url.rsplit(":", 1)[-1].split("/")[0]
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if cmd.startswith("redis-server") and f":{port}" in cmd:
                return int(proc.name)
    return None


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def spread(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {statistics.median(values):.0f} ms, p95 {percentile(values, 0.95):.0f} ms, "
        f"max {max(values):.0f} ms"
    )


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def raise_fd_limit(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise SystemExit(f"ulimit -n is {soft} (hard {hard}); {needed} descriptors needed")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# --------------------------------------------------------------------------- the open


@dataclass
class Card:
    """One result to enter: the match, and each side's link (id and token)."""

    match_id: int
    home_link: int
    home_token: str
    away_link: int
    away_token: str


def build_open(n_lines: int, n_results: int, rng: random.Random) -> tuple[str, list[Card]]:
    """A public running open of ``n_lines`` lines, its first (Danish) round paired; the links
    of both sides of ``n_results`` of its tables, spread over the round. Returns the round
    page's path and the cards."""
    import datetime

    from django.urls import reverse

    from scoresheets.services import links
    from tournaments.models import Match, Outcome, Stage, Tournament
    from tournaments.services import entries, pairing, presets

    tournament = presets.create_tournament_from_preset(
        "scopa-classica-11",
        name=f"Venue {n_lines}",
        start_date=datetime.date(2026, 1, 1),
        stages=[{"name": "Open", "kind": Stage.Kind.DANISH}],
    )
    entries.add_lines(
        tournament,
        [
            entries.LineRow(name=f"V{n_lines}-{i}", players=[(f"P{n_lines}-{i}", "")], row_number=i)
            for i in range(n_lines)
        ],
    )
    stage = tournament.stages.get()
    round_ = pairing.pair_next_round(stage)
    Tournament.objects.filter(pk=tournament.pk).update(
        is_public=True, status=Tournament.Status.RUNNING
    )
    tournament.refresh_from_db()
    matches = list(
        Match.objects.filter(round=round_, away__isnull=False, home__isnull=False)
        .exclude(outcome=Outcome.BYE)
        .select_related("home", "away")
        .order_by("table_number")
    )
    if n_results > len(matches):
        raise SystemExit(f"{n_results} results asked, the round has {len(matches)} tables")
    chosen = sorted(rng.sample(range(len(matches)), n_results))
    cards = []
    for index in chosen:
        match = matches[index]
        home = links.link_for(tournament, match.home)
        away = links.link_for(tournament, match.away)
        cards.append(Card(match.pk, home.pk, home.token, away.pk, away.token))
    rng.shuffle(cards)  # results come in from tables all over the room
    return reverse("public:round", args=[tournament.slug, round_.pk]), cards


# --------------------------------------------------------------------------- the phones


def phone_flow(base: str, card: Card, checks: int) -> dict[str, Any]:
    """One result through the phone pages, as two phones do it (each its own cookie jar)."""
    import requests

    timings: list[tuple[str, float, int]] = []

    def timed(kind: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        response = call(*args, timeout=60, **kwargs)
        timings.append((kind, (time.perf_counter() - started) * 1000, response.status_code))
        return response

    mid = card.match_id
    home, away = requests.Session(), requests.Session()
    timed("open link", home.get, f"{base}/p/{card.home_token}/")
    sheet = f"{base}/p/k{card.home_link}/m/{mid}/"
    page = timed("sheet page", home.get, sheet)
    found = CSRF.search(page.text)
    headers = {"X-CSRFToken": found.group(1) if found else "", "Content-Type": "application/json"}
    for _ in range(checks):
        timed(
            "check",
            home.post,
            f"{sheet}check/",
            data=json.dumps({"deals": [DEAL]}),
            headers=headers,
        )
    # Send: the page's outbox posts the sheet to /sync/, then the page reloads (where it stands)
    body = {"deals": [DEAL], "client_key": str(uuid.uuid4()), "based_on": "", "queued": False}
    submitted = timed("sync", home.post, f"{sheet}sync/", data=json.dumps(body), headers=headers)
    if submitted.status_code == 200:
        timed("sheet page", home.get, sheet)
    timed("open link", away.get, f"{base}/p/{card.away_token}/")
    other = f"{base}/p/k{card.away_link}/m/{mid}/"
    page = timed("sheet page", away.get, other)
    found, report = CSRF.search(page.text), REPORT.search(page.text)
    form = {"action": "accept", "csrfmiddlewaretoken": found.group(1) if found else ""}
    if report:
        form["report"] = report.group(1)
    sent = time.perf_counter()
    signed = timed("countersign", away.post, other, data=form, allow_redirects=False)
    saved = time.perf_counter()
    if signed.status_code == 302:
        timed("sheet page", away.get, f"{base}{signed.headers['Location']}")
    ok = submitted.status_code == 200 and signed.status_code == 302
    return {"match": mid, "sent": sent, "saved": saved, "ok": ok, "timings": timings}


def phones(
    base: str,
    cards: list[Card],
    pace_s: float,
    concurrency: int,
    checks: int,
    start: float,
    out: Any,
) -> None:
    """The phones' process: one result every ``pace_s`` seconds from ``start`` (as fast as
    ``concurrency`` phones go when 0); each result's record on ``out``."""
    from concurrent.futures import ThreadPoolExecutor

    def one(index: int, card: Card) -> dict[str, Any]:
        delay = start + index * pace_s - time.perf_counter()
        if pace_s and delay > 0:
            time.sleep(delay)
        try:
            return phone_flow(base, card, checks)
        except Exception as error:  # a refused connection: the result is reported missing
            return {"match": card.match_id, "ok": False, "error": repr(error), "timings": []}

    workers = concurrency if not pace_s else max(concurrency, 16)
    with ThreadPoolExecutor(workers) as pool:
        for record in pool.map(one, range(len(cards)), cards):
            out.put(record)
    out.put(None)


# --------------------------------------------------------------------------- the spectators


async def http_get(port: int, path: str, headers: dict[str, str]) -> tuple[int, dict, bytes, int]:
    """One GET on its own connection, as the page's XHR would make it: status, headers (lower
    case), body (decoded) and the bytes that came on the wire."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    got = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        got[name.strip().lower()] = value.strip()
    if got.get("transfer-encoding") == "chunked":
        chunks, rest = [], body
        while rest:
            size_text, _, rest = rest.partition(b"\r\n")
            size = int(size_text.split(b";")[0], 16)
            if not size:
                break
            chunks.append(rest[:size])
            rest = rest[size + 2 :]
        body = b"".join(chunks)
    if got.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    return int(status_line.split()[1]), got, body, len(raw)


_parsed: dict[int, dict[str, int]] = {}


def screen_of(html: str) -> dict[str, int]:
    """The rows a page or fragment shows, id -> hash of the row's text (shared by every
    spectator that fetched the same text)."""
    key = hash(html)
    if key not in _parsed:
        _parsed[key] = {m.group(1): hash(m.group(0).strip()) for m in ROW.finditer(html)}

    return _parsed[key]


@dataclass
class Spectator:
    """One screen holding the round page, driven as live.js drives it."""

    bench: Venue
    ws_port: int
    version: int | None = None
    base: dict[str, int] = field(default_factory=dict)
    overlay: dict[str, int] = field(default_factory=dict)
    etag: str = ""
    in_flight: bool = False
    again: bool = False
    connected: bool = False
    poll_s: float = 15.0
    bytes_in: int = 0
    held: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # row -> changes
    arrived: dict[str, float] = field(default_factory=dict)  # row -> its message's arrival
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def row(self, row_id: str) -> int | None:
        return self.overlay.get(row_id, self.base.get(row_id))

    def note(self, rows: dict[str, int], now: float) -> None:
        """Record, for the watched rows, when the screen came to hold what."""
        watched = self.bench.watched
        for row_id in rows if len(rows) < len(watched) else watched:
            value = rows.get(row_id)
            if value is not None and row_id in watched and value != self.row(row_id):
                self.held.setdefault(row_id, []).append((value, now))

    def show(self, html: str, now: float) -> None:
        rows = screen_of(html)
        if self.base:
            self.note(rows, now)
        self.base, self.overlay = rows, {}

    def spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def load(self) -> None:
        """The page itself, once (the socket's path and the version in its live element)."""
        _status, _headers, body, _wire = await http_get(
            self.bench.web_port, self.bench.path, self.bench.page_headers
        )
        html = body.decode()
        found, poll = VERSION.search(html), POLL.search(html)
        self.version = int(found.group(1)) if found and found.group(1) else None
        self.poll_s = float(poll.group(1)) if poll else 15.0
        self.show(html, time.perf_counter())

    def refresh(self, *, revalidate_only: bool = False) -> None:
        if self.in_flight:
            self.again = True
            return
        self.again = False
        self.in_flight = True
        self.spawn(self.fetch(revalidate_only))

    async def fetch(self, poll: bool) -> None:
        headers = dict(self.bench.page_headers, **{"HX-Request": "true"})
        if not poll:
            headers["Cache-Control"] = "max-age=0"
        if self.etag:
            headers["If-None-Match"] = self.etag
        try:
            status, got, body, wire = await http_get(self.bench.web_port, self.bench.path, headers)
            self.bytes_in += wire
            self.bench.statuses.append((time.perf_counter(), status))
            if self.bench.measuring:
                self.bench.fetches += 1
            if status == 200:
                self.show(body.decode(), time.perf_counter())
                self.etag = got.get("etag", "")
            if status in (200, 304) and got.get("x-live-version", "").isdigit():
                self.version = int(got["x-live-version"])
            elif status not in (200, 304):
                self.bench.http_errors += 1
        except OSError:
            self.bench.http_errors += 1
        finally:
            self.in_flight = False
            if self.again:
                self.refresh()

    def heard(self, raw: str | bytes) -> None:
        now = time.perf_counter()
        self.bytes_in += len(raw)
        try:
            message = json.loads(raw) or {}
        except ValueError:
            message = {}
        rows = message.get("rows")
        if isinstance(rows, list):
            for row in rows:
                self.arrived.setdefault(row.get("id", ""), now)
        version = message.get("v")
        if isinstance(version, int) and self.version is not None:
            if version <= self.version:
                return
            if isinstance(rows, list) and version == self.version + 1 and not self.in_flight:
                patched = {
                    row["id"]: hash(row["html"].strip())
                    for row in rows
                    if row.get("id") in self.base or row.get("id") in self.overlay
                }
                self.note(patched, time.perf_counter())
                self.overlay.update(patched)
                self.version = version
                return
        self.refresh()

    async def run(self, gate: asyncio.Semaphore, opened: asyncio.Event) -> None:
        """The socket, for as long as the bench runs: reconnecting as live.js does."""
        import websockets

        url = f"ws://127.0.0.1:{self.ws_port}/ws/t/{self.bench.slug}/?lang={LANG}"
        origin = f"http://127.0.0.1:{self.bench.web_port}"
        backoff = 1.0
        while not self.bench.stopping:
            was_open = False
            try:
                async with gate:
                    sock = await websockets.connect(
                        url, origin=origin, open_timeout=30, ping_interval=None, max_queue=None
                    )
                was_open = self.connected = True
                self.bench.opened.append(time.perf_counter())
                opened.set()
                self.refresh()  # anything missed while the socket was down
                async for raw in sock:
                    self.heard(raw)
            except (OSError, TimeoutError, websockets.WebSocketException):
                self.bench.failed_handshakes += not was_open
            self.connected = False
            if self.bench.stopping:
                return
            self.bench.closed_sockets += was_open
            wait = 1.0 if was_open else backoff
            backoff = min(wait * 2, 30.0)
            ends = time.monotonic() + wait * (0.5 + random.random())
            while time.monotonic() < ends and not self.bench.stopping:  # polling meanwhile
                await asyncio.sleep(
                    min(ends - time.monotonic(), self.poll_s * (0.5 + random.random()))
                )
                if time.monotonic() < ends and not self.in_flight:
                    self.refresh(revalidate_only=True)


@dataclass
class Venue:
    """What the spectators share: the servers' ports, the page, the counters."""

    web_port: int
    path: str
    slug: str
    watched: set[str]
    page_headers: dict[str, str] = field(
        default_factory=lambda: {"Accept-Language": LANG, "Accept-Encoding": "gzip"}
    )
    measuring: bool = False
    stopping: bool = False
    fetches: int = 0
    http_errors: int = 0
    failed_handshakes: int = 0
    closed_sockets: int = 0
    bytes_before: dict[int, int] = field(default_factory=dict)
    opened: list[float] = field(default_factory=list)  # when each socket opened
    statuses: list[tuple[float, int]] = field(default_factory=list)  # fragment answers


# --------------------------------------------------------------------------- real pages

# Once the page has loaded: the text of every watched row; after each change to the document,
# a watched row whose text differs is reported once (live.js swaps rows, or the whole fragment).
ROW_WATCH = """
(watched) => {
  const before = {};
  const told = new Set();
  for (const id of watched) {
    const row = document.getElementById(id);
    before[id] = row ? row.textContent : null;
  }
  new MutationObserver(() => {
    for (const id of watched) {
      if (told.has(id)) continue;
      const row = document.getElementById(id);
      if (row && row.textContent !== before[id]) {
        told.add(id);
        window.__venueRow(id);
      }
    }
  }).observe(document.body, {childList: true, subtree: true, characterData: true});
}
"""


# A phone's page gets this share of one core: about a quarter of a server core's speed.
PHONE_CPU_SHARE = 0.25


class CpuCap:
    """A page's renderer held to ``PHONE_CPU_SHARE`` of a core by a kernel CPU quota (a cgroup
    of its own, v1 or v2): the scheduler pauses it once its share is spent.

    Not DevTools' ``Emulation.setCPUThrottlingRate``: on Linux its throttling thread keeps the
    renderer's main thread spinning for the share it takes away, so a page "throttled 4x"
    burns three quarters of a core whether or not it has work (measured: 0.50 CPU-s a result
    for one page, against 0.04 unthrottled); twenty of them took the whole machine."""

    ROOTS = (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup"))

    def __init__(self, name: str) -> None:
        self.path: Path | None = None
        period = 100_000
        quota = int(period * PHONE_CPU_SHARE)
        for root in self.ROOTS:
            v1 = (root / "cpu.cfs_quota_us").exists()
            controllers = root / "cgroup.controllers"
            v2 = not v1 and controllers.exists() and "cpu" in controllers.read_text().split()
            if not (v1 or v2):
                continue
            path = root / name
            try:
                path.mkdir(exist_ok=True)
                if v2:
                    (path / "cpu.max").write_text(f"{quota} {period}")
                else:
                    (path / "cpu.cfs_period_us").write_text(str(period))
                    (path / "cpu.cfs_quota_us").write_text(str(quota))
            except OSError:
                continue
            self.path = path
            return

    def hold(self, pids: set[int]) -> None:
        if self.path is not None:
            for pid in pids:
                with contextlib.suppress(OSError):  # gone already
                    (self.path / "cgroup.procs").write_text(str(pid))

    def paused(self) -> int:
        """How many of its periods the kernel paused the page once its share was spent."""
        if self.path is None:
            return 0
        with contextlib.suppress(OSError, ValueError):
            for line in (self.path / "cpu.stat").read_text().splitlines():
                name, value = line.split()
                if name == "nr_throttled":
                    return int(value)
        return 0

    def remove(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.rmdir()


def renderers() -> set[int]:
    """Chromium's renderer processes on this machine."""
    found = set()
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if b"--type=renderer" in (proc / "cmdline").read_bytes():
                found.add(int(proc.name))
    return found


class Chromium:
    """``n`` real pages of the round in headless Chromium, each renderer held to a phone's
    share of a core (``CpuCap``); each reports when a watched row's new content is in its
    DOM, and its renderer's main thread says where its CPU went."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.held: list[dict[str, float]] = [{} for _ in range(n)]
        self.playwright: Any = None
        self.browser: Any = None
        self.sessions: list[Any] = []
        self.caps: list[CpuCap] = []
        self.paused = 0  # periods the caps paused a page, read as the pages close
        self.requests = 0  # the pages' own requests once loaded (a refetch, a poll)

    async def main_thread(self) -> dict[str, float]:
        """The pages' renderer main threads, summed: CPU seconds (CDP ``Performance`` metrics
        in thread ticks) in tasks, script, layout and style, and how many layouts."""
        wanted = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
        total = dict.fromkeys((*wanted, "LayoutCount"), 0.0)
        for cdp in self.sessions:
            metrics = (await cdp.send("Performance.getMetrics"))["metrics"]
            for metric in metrics:
                if metric["name"] in total:
                    total[metric["name"]] += metric["value"]
        return total

    async def open(self, url: str, watched: list[str]) -> int:
        from playwright.async_api import async_playwright

        # the browser tests' Chromium, launched as they launch it
        from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        pushing = 0
        for index in range(self.n):
            before = renderers()
            context = await self.browser.new_context(locale="it-IT")
            held = self.held[index]
            await context.expose_function(
                "__venueRow", lambda row_id, held=held: held.setdefault(row_id, time.perf_counter())
            )
            page = await context.new_page()
            cdp = await context.new_cdp_session(page)
            await cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
            self.sessions.append(cdp)
            await page.goto(url, wait_until="load", timeout=120_000)
            await page.evaluate(ROW_WATCH, watched)
            page.on("request", self._requested)
            cap = CpuCap(f"venue-page-{os.getpid()}-{index}")
            cap.hold(renderers() - before)  # this page's renderer, opened with it
            self.caps.append(cap)
            with contextlib.suppress(Exception):
                await page.wait_for_selector("#live[data-live-state=push]", timeout=30_000)
                pushing += 1
        return pushing

    def _requested(self, request: Any) -> None:
        self.requests += 1

    async def close(self) -> None:
        self.paused = sum(cap.paused() for cap in self.caps)
        if self.browser is not None:
            await self.browser.close()
        if self.playwright is not None:
            await self.playwright.stop()
        for cap in self.caps:
            cap.remove()

    @property
    def capped(self) -> int:
        return sum(cap.path is not None for cap in self.caps)


# --------------------------------------------------------------------------- the servers


@dataclass
class Servers:
    web: subprocess.Popen[bytes]
    web_port: int
    push: list[subprocess.Popen[bytes]]
    push_ports: list[int]
    worker: subprocess.Popen[bytes] | None
    proxy: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)
    fds: Callable[[], None] = lambda: None
    bound: list[int] = field(default_factory=list)  # the push processes' own ports

    def all(self) -> list[subprocess.Popen[bytes]]:
        return [
            *([self.proxy] if self.proxy else []),
            self.web,
            *self.push,
            *([self.worker] if self.worker else []),
        ]


# What docs/deployment.md shows, with the bench's ports: one address for the phones, the pages
# and the sockets; /ws/ to any push process (no stickiness: each one writes a result to its own
# sockets, whichever page they hold), everything else to gunicorn.
NGINX_CONF = """
daemon off;
worker_processes 1;
worker_rlimit_nofile {limit};
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    upstream web {{ server 127.0.0.1:{web}; keepalive 64; }}
    upstream push {{ least_conn; {push} }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location /ws/ {{
            proxy_pass http://push;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
            proxy_read_timeout 1h;
        }}
        location / {{
            proxy_pass http://web;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
}}
"""


def start_proxy(servers: Servers, limit: int) -> tuple[subprocess.Popen[bytes], int]:
    """nginx (Debian's) in front of gunicorn and the push processes, on a free port."""
    import tempfile

    from machine import free_port, wait_for

    where = Path(tempfile.mkdtemp(prefix="venue-nginx-"))
    port = free_port()
    conf = where / "nginx.conf"
    conf.write_text(
        NGINX_CONF.format(
            dir=where,
            limit=limit,
            web=servers.web_port,
            push=" ".join(f"server 127.0.0.1:{p};" for p in servers.push_ports),
            port=port,
        )
    )
    proxy = subprocess.Popen(
        ["nginx", "-c", str(conf), "-p", str(where), "-e", str(where / "e.log")]
    )
    wait_for(port, time.monotonic() + 30, "nginx")
    return proxy, port


def start_servers(args: argparse.Namespace, env: dict[str, str], limit: int) -> Servers:
    from machine import free_port, wait_for

    bin_dir = Path(sys.executable).parent

    def fds() -> None:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        )

    web_port = free_port()
    web = subprocess.Popen(
        [
            str(bin_dir / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{web_port}",
            "--workers",
            str(args.processes),
            "--threads",
            str(args.threads),
            "--backlog",
            "4096",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        preexec_fn=fds,
    )
    push_ports = [free_port() for _ in range(args.processes)]
    push = [start_push(args, port, env, fds) for port in push_ports]
    worker = None
    if not args.no_worker:  # its output (Celery's warning about root, errors) in a file
        log = open(f"/tmp/venue-worker-{os.getpid()}.log", "wb")  # noqa: SIM115
        worker = subprocess.Popen(
            [
                str(bin_dir / "celery"),
                "-A",
                "config",
                "worker",
                "--concurrency",
                "1",
                "--loglevel",
                "WARNING",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=log,
        )
        print(f"the worker's output: {log.name}")
    deadline = time.monotonic() + 90
    wait_for(web_port, deadline, "gunicorn")
    for port in push_ports:
        wait_for(port, deadline, args.push)
    return Servers(web, web_port, push, push_ports, worker, env=env, fds=fds, bound=push_ports)


def start_push(
    args: argparse.Namespace, port: int, env: dict[str, str], fds: Callable[[], None]
) -> subprocess.Popen[bytes]:
    bin_dir = Path(sys.executable).parent
    if args.push == "daphne":
        command = [str(bin_dir / "daphne"), "-b", "127.0.0.1", "-p", str(port), "-v", "0",
                   "config.asgi:application"]  # fmt: skip
    else:  # what a site runs (docs/deployment.md); behind --proxy it reads X-Forwarded-For
        command = [sys.executable, "-m", "config.push", "--port", str(port)]
        command += [] if args.proxy else ["--no-proxy"]
    return subprocess.Popen(command, cwd=ROOT, env=env, preexec_fn=fds)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --------------------------------------------------------------------------- the run


def postgres_backends(database: str) -> list[int]:
    """The PostgreSQL server processes serving the bench's database (gunicorn's, the push's and
    the worker's connections)."""
    import psycopg
    from machine import database_url

    with psycopg.connect(database_url("postgres"), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", [database]
        ).fetchall()
    return [int(row[0]) for row in rows]


class Cpu:
    """CPU seconds per role over the entry phase, from /proc: processes alive at the end (those
    born meanwhile counted whole); those that exited meanwhile are not counted."""

    def __init__(self, roles: dict[str, list[int]]) -> None:
        self.start = {role: {pid: cpu_s(pid) for pid in pids} for role, pids in roles.items()}

    def since(self, roles: dict[str, list[int]]) -> dict[str, float]:
        spent = {}
        for role, pids in roles.items():
            before = self.start.get(role, {})
            # a process gone meanwhile (a database connection closed) is left out: /proc no
            # longer says what it spent, and its start figure must not count against the rest
            spent[role] = sum(
                max(0.0, cpu_s(pid) - before.get(pid, 0.0)) if Path(f"/proc/{pid}").exists() else 0
                for pid in set(pids) | set(before)
            )
        return spent


async def restart_push(
    args: argparse.Namespace, servers: Servers, spectators: list[Spectator], bench: Venue
) -> dict[str, Any]:
    """Every push process stopped (SIGTERM, as a deploy does) and started again on its port;
    then, until every spectator holds a socket again: how long, failed handshakes, the fragment
    requests of the storm (200 or 304) and gunicorn's CPU meanwhile."""
    from machine import wait_for

    loop = asyncio.get_running_loop()
    began = time.perf_counter()
    handshakes = bench.failed_handshakes
    web = Cpu({"gunicorn": children(servers.web.pid)})
    for process in servers.push:
        process.terminate()
    await loop.run_in_executor(None, lambda: [stop(p) for p in servers.push])
    stopped = time.perf_counter()
    servers.push = [start_push(args, port, servers.env, servers.fds) for port in servers.bound]
    deadline = time.monotonic() + 90
    for port in servers.bound:
        await loop.run_in_executor(None, wait_for, port, deadline, args.push)
    listening = time.perf_counter()
    while sum(s.connected for s in spectators) < len(spectators):
        if time.perf_counter() - began > 180:
            break
        await asyncio.sleep(0.05)
    back = time.perf_counter()
    await asyncio.sleep(2.0)  # the last refetches
    answers = [status for at, status in bench.statuses if at >= began]
    return {
        "began": began,
        "back": back,
        "stopped_s": stopped - began,
        "listening_s": listening - began,
        "back_s": back - began,
        "reconnected": sum(s.connected for s in spectators),
        "failed_handshakes": bench.failed_handshakes - handshakes,
        "answers": {status: answers.count(status) for status in sorted(set(answers))},
        "gunicorn_cpu_s": web.since({"gunicorn": children(servers.web.pid)})["gunicorn"],
    }


async def venue(
    args: argparse.Namespace, servers: Servers, path: str, cards: list[Card], database: str
) -> None:
    slug = path.split("/")[2]
    bench = Venue(servers.web_port, path, slug, {f"m-{card.match_id}" for card in cards})
    load_start = loadavg()
    rss_before = sum(rss_kib(p.pid) for p in servers.push)

    spectators = [
        Spectator(bench, servers.push_ports[i % len(servers.push_ports)])
        for i in range(args.spectators)
    ]
    started = time.perf_counter()
    gate = asyncio.Semaphore(args.connect_concurrency)

    async def loaded(spectator: Spectator) -> None:
        async with gate:
            await spectator.load()

    await asyncio.gather(*(loaded(s) for s in spectators))
    unseen = bench.watched - set(spectators[0].base)
    if unseen:  # the rows are read with ROW: a changed row markup must not read as "missing"
        raise SystemExit(f"the round page shows no row {sorted(unseen)[:3]}: update ROW")
    events = [asyncio.Event() for _ in spectators]
    runners = [asyncio.create_task(s.run(gate, e)) for s, e in zip(spectators, events, strict=True)]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), args.connect_timeout)
    while any(s.in_flight for s in spectators) and time.perf_counter() - started < 300:
        await asyncio.sleep(0.2)
    connected = sum(s.connected for s in spectators)
    await asyncio.sleep(1.0)
    rss_after = sum(rss_kib(p.pid) for p in servers.push)
    print(
        f"{connected}/{len(spectators)} spectators connected and holding the page in "
        f"{time.perf_counter() - started:.1f} s ({bench.failed_handshakes} failed handshakes); "
        f"{args.push} RSS {rss_before / 1024:.0f} -> {rss_after / 1024:.0f} MiB: "
        f"{(rss_after - rss_before) / max(connected, 1):.1f} KiB per socket",
        flush=True,
    )

    chromium = Chromium(args.chromium)
    if args.chromium:
        # no proxy sends /ws/ to the push here: the real pages are served whole by the push
        # (config.asgi serves HTTP too), so their socket is on the same host and port
        pushing = await chromium.open(
            f"http://127.0.0.1:{servers.push_ports[0]}{path}", sorted(bench.watched)
        )
        print(
            f"{pushing}/{args.chromium} Chromium pages on the socket, {chromium.capped} held to "
            f"{PHONE_CPU_SHARE:.0%} of a core as a phone's"
        )

    def roles() -> dict[str, list[int]]:
        own = set(children(os.getpid())) - {os.getpid()}
        found = {
            "gunicorn": children(servers.web.pid),
            f"push ({args.push})": [p.pid for p in servers.push],
            **({"nginx": children(servers.proxy.pid)} if servers.proxy else {}),
            "worker": children(servers.worker.pid) if servers.worker else [],
            "PostgreSQL (bench's backends)": postgres_backends(database),
            "spectators (this process)": [os.getpid()],
            "phones": [phone_process.pid] if phone_process.pid else [],
        }
        if args.chromium:  # the browser's processes and Playwright's driver, this one's children
            servers_own = {pid for proc in servers.all() for pid in children(proc.pid)}
            found["Chromium"] = sorted(own - set(found["phones"]) - servers_own)
        redis = redis_pid(os.environ.get("CHANNEL_LAYER_URL", ""))
        if redis:
            found["Redis (whole server, shared)"] = [redis]
        return found

    n, window = args.results, args.window_s
    pace_s = 0.0 if args.pace == "max" else window / n
    print(
        f"entering {n} results through the phones: "
        + (f"one every {pace_s:.2f} s" if pace_s else f"as fast as {args.phones} phones go"),
        flush=True,
    )
    out: Any = multiprocessing.get_context("fork").Queue()
    begin = time.perf_counter() + 1.0
    phone_process = multiprocessing.get_context("fork").Process(
        target=phones,
        args=(
            f"http://127.0.0.1:{servers.web_port}",
            cards,
            pace_s,
            args.phones,
            args.checks,
            begin,
            out,
        ),
        daemon=True,
    )
    bench.bytes_before = {id(s): s.bytes_in for s in spectators}
    phone_process.start()
    cpu = Cpu(roles())
    page_cpu = await chromium.main_thread()
    page_requests = chromium.requests
    bench.measuring = True
    records: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    restart: asyncio.Task[dict[str, Any]] | None = None
    while True:
        record = await loop.run_in_executor(None, out.get)
        if record is None:
            break
        records.append(record)
        if len(records) == args.restart_push_after:
            print(f"  restarting the push after {len(records)} results", flush=True)
            restart = asyncio.create_task(restart_push(args, servers, spectators, bench))
        if len(records) % max(1, n // 10) == 0:
            print(f"  {len(records)}/{n} results entered", flush=True)
    entered_at = time.perf_counter()
    entry_s = entered_at - begin
    watched = bench.watched

    def all_changed() -> bool:
        return all(len(s.held) == len(watched) and not s.in_flight for s in spectators)

    while not all_changed() and time.perf_counter() - entered_at < args.drain_s:
        await asyncio.sleep(0.2)
    storm = await restart if restart is not None else None
    spent = cpu.since(roles())  # entry, and the deliveries still under way when it ended
    page_after = await chromium.main_thread()
    page_cpu = {name: page_after[name] - page_cpu[name] for name in page_after}
    page_requests = chromium.requests - page_requests
    drained_s = time.perf_counter() - begin
    bench.measuring = False
    phone_process.join(timeout=10)

    # the exact rows the round page shows at the end: what every screen must hold
    _s, _h, body, _w = await http_get(servers.web_port, path, bench.page_headers)
    final = screen_of(body.decode())
    bench.stopping = True
    await chromium.close()
    for runner in runners:
        runner.cancel()
    await asyncio.gather(*runners, return_exceptions=True)
    load_end = loadavg()

    ok = [r for r in records if r.get("ok")]
    latencies, arrivals, missing = [], [], 0
    for record in ok:
        row_id = f"m-{record['match']}"
        for spectator in spectators:
            times = [t for value, t in spectator.held.get(row_id, []) if value == final.get(row_id)]
            if times:
                latencies.append((times[0] - record["sent"]) * 1000)
            else:
                missing += 1
            if row_id in spectator.arrived:
                arrivals.append((spectator.arrived[row_id] - record["sent"]) * 1000)
    kinds: dict[str, list[float]] = {}
    statuses: dict[str, int] = {}
    for record in records:
        for kind, ms, status in record["timings"]:
            kinds.setdefault(kind, []).append(ms)
            if status >= 400:
                statuses[kind] = statuses.get(kind, 0) + 1
    received = sum(s.bytes_in - bench.bytes_before[id(s)] for s in spectators)
    pairs = max(len(ok) * len(spectators), 1)
    print(
        f"{len(ok)}/{len(records)} results in force through the phones in {entry_s:.1f} s "
        f"({len(records) - len(ok)} refused or failed)"
    )
    for record in [r for r in records if not r.get("ok")][:3]:
        print(f"  failed: match {record['match']}: {record.get('error') or record['timings']}")
    for kind, values in kinds.items():
        print(
            f"  phone {kind}: {len(values)} requests, {spread(values)}"
            + (f", {statuses[kind]} answered >= 400" if kind in statuses else "")
        )
    print(
        f"countersign -> content on screen: {spread(latencies)} "
        f"({len(latencies)} of {pairs} result x spectator pairs)"
    )
    print(f"countersign -> socket message arrives: {spread(arrivals)}")
    print(
        f"missing deliveries: {missing} of {pairs} (not holding the final row "
        f"{args.drain_s:.0f} s after the last result); failed handshakes {bench.failed_handshakes}"
        f", sockets closed {bench.closed_sockets}; fragment requests {bench.fetches} "
        f"({bench.http_errors} failed)"
    )
    print(f"bytes per result per spectator: {received / pairs:.0f} (WebSocket payload + HTTP)")
    print(f"CPU seconds over the {drained_s:.1f} s of entry and delivery (per result):")
    for role, seconds in spent.items():
        print(f"  {role}: {seconds:.2f} s ({seconds / max(len(records), 1):.3f} s)")
    if args.chromium:
        real, absent = [], 0
        for record in ok:
            for held in chromium.held:
                row_id = f"m-{record['match']}"
                if row_id in held:
                    real.append((held[row_id] - record["sent"]) * 1000)
                else:
                    absent += 1
        print(
            f"countersign -> new row in a Chromium page's DOM: {spread(real)}; "
            f"missing {absent} of {len(ok) * args.chromium}"
        )
        per = max(len(records), 1) * args.chromium
        print(
            "a Chromium page's main thread a result (CPU ms): "
            f"tasks {page_cpu['TaskDuration'] * 1000 / per:.1f}, "
            f"script {page_cpu['ScriptDuration'] * 1000 / per:.1f}, "
            f"layout {page_cpu['LayoutDuration'] * 1000 / per:.1f} "
            f"({page_cpu['LayoutCount'] / per:.1f} layouts), "
            f"style {page_cpu['RecalcStyleDuration'] * 1000 / per:.1f}; "
            f"the pages' requests {page_requests}; the caps paused a page "
            f"{chromium.paused} times in 0.1 s periods"
        )
    if storm is not None:
        during = [
            (times[0] - record["sent"]) * 1000
            for record in ok
            if storm["began"] <= record["sent"] <= storm["back"]
            for spectator in spectators
            for times in [
                [
                    t
                    for value, t in spectator.held.get(f"m-{record['match']}", [])
                    if value == final.get(f"m-{record['match']}")
                ]
            ]
            if times
        ]
        print(
            f"push restarted: stopped in {storm['stopped_s']:.1f} s, listening again at "
            f"{storm['listening_s']:.1f} s, {storm['reconnected']}/{len(spectators)} sockets back "
            f"at {storm['back_s']:.1f} s; failed handshakes {storm['failed_handshakes']}; "
            f"fragment answers {storm['answers']}; gunicorn {storm['gunicorn_cpu_s']:.2f} CPU-s; "
            f"results countersigned meanwhile -> on screen: {spread(during)}"
        )
    print(f"load average at start {load_start}, at end {load_end}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        epilog="What it measures: see the module's docstring (bench/venue.py).",
    )
    parser.add_argument("--lines", type=int, default=1000, help="lines of the open (1000)")
    parser.add_argument(
        "--pace",
        choices=sorted(PACES),
        default="window",
        help="window: 500 in 600 s; burst: 300 in 180 s; max: at once",
    )
    parser.add_argument("--results", type=int, help="results entered (the pace's count)")
    parser.add_argument("--window-s", type=float, help="seconds they are spread over")
    parser.add_argument("--spectators", type=int, default=200, help="screens on the round page")
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="gunicorn workers and push processes (no proxy: spectators are "
        "spread over the push ports)",
    )
    parser.add_argument(
        "--chromium",
        type=int,
        default=0,
        help="real Chromium pages among the screens (each held to a quarter of a core)",
    )
    parser.add_argument(
        "--push",
        choices=["uvicorn", "daphne"],
        default="uvicorn",
        help="the push server: uvicorn as python -m config.push runs it (the site's), or daphne",
    )
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument(
        "--proxy",
        action="store_true",
        help="nginx in front (docs/deployment.md): phones, pages and sockets on its one port",
    )
    parser.add_argument(
        "--restart-push-after",
        type=int,
        default=0,
        metavar="K",
        help="stop and start every push process after K results (a deploy): the reconnection",
    )
    parser.add_argument("--phones", type=int, default=8, help="concurrent phones at --pace max")
    parser.add_argument("--checks", type=int, default=2, help="/check/ posts per sheet")
    parser.add_argument("--no-worker", action="store_true", help="start no Celery worker")
    parser.add_argument("--connect-concurrency", type=int, default=50)
    parser.add_argument("--connect-timeout", type=float, default=120.0)
    parser.add_argument(
        "--drain-s", type=float, default=30.0, help="seconds after the last result before a miss"
    )
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    count, window = PACES[args.pace]
    args.results = args.results or count
    args.window_s = args.window_s if args.window_s is not None else window
    if args.pace != "max" and args.results != count and args.window_s == window:
        args.window_s = window * args.results / count  # fewer results at the pace's rate

    import django

    django.setup()
    import logging

    from django.conf import settings
    from django.db import connection
    from machine import cpu_model, database_url

    logging.disable(logging.INFO)
    if connection.vendor != "postgresql":
        raise SystemExit("bench/venue.py needs PostgreSQL in DATABASE_URL (the servers share it)")
    if not settings.CHANNEL_LAYER_URL:
        raise SystemExit("bench/venue.py needs CHANNEL_LAYER_URL (Redis): the production layer")
    if not os.environ.get("CACHE_URL"):
        raise SystemExit("bench/venue.py needs CACHE_URL (Redis): the pages' version is shared")
    limit = raise_fd_limit(3 * args.spectators + 512)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_venuebench"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    servers = None
    try:
        from django.core.cache import cache

        # The throwaway database numbers its rows as the last run's did: the pages and rows that
        # run left in the shared cache would be served as this one's. CACHE_URL is the bench's.
        cache.clear()
        started = time.perf_counter()
        path, cards = build_open(args.lines, args.results, random.Random(args.seed))
        print(
            f"open of {args.lines} lines, round page {path}, {len(cards)} tables to play "
            f"(built in {time.perf_counter() - started:.1f} s; database {test_name})",
            flush=True,
        )
        connection.close()
        env = dict(os.environ, DATABASE_URL=database_url(test_name), CONN_MAX_AGE="60")
        env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))  # the servers refuse the dev key
        env.setdefault("LOG_LEVEL", "WARNING")  # the change log's lines, one per request
        servers = start_servers(args, env, limit)
        if args.proxy:
            servers.proxy, port = start_proxy(servers, limit)
            servers.web_port, servers.push_ports = port, [port]
        print(
            f"gunicorn 127.0.0.1:{servers.web_port} ({args.processes} x {args.threads} threads), "
            f"{args.push} on {', '.join(map(str, servers.push_ports))}"
            f"{' (nginx: one port for all)' if args.proxy else ''}, "
            f"{'one Celery worker' if servers.worker else 'no worker'}; channel layer "
            f"{settings.CHANNEL_LAYER_URL}, cache {os.environ.get('CACHE_URL', 'default')}; "
            f"{args.spectators} spectators ({LANG}), ulimit -n {limit}",
            flush=True,
        )
        # the spectators on uvloop, as the push runs: 2,000 simulated screens share the
        # servers' two cores, and the less of them they take the more the figures are the servers'
        uvloop.run(venue(args, servers, path, cards, test_name))
        print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}")
    finally:
        if servers is not None:
            for process in servers.all():
                stop(process)
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        print(f"dropped {test_name}")


if __name__ == "__main__":
    main()
