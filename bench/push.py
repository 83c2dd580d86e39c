"""Live pages at a venue's scale: N WebSocket clients on one daphne hear a result come into force.

Builds a small public tournament in a throwaway copy of the configured database (PostgreSQL:
daphne must see it), serves the project's ASGI application (config.asgi) with one daphne process
on 127.0.0.1 using the Redis channel layer, connects N asyncio WebSocket clients (the
``websockets`` package, all in this process) to the tournament's socket, then enters results one
at a time through the result service (as the desk or the API would) and times each client's
message:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \\
    CHANNEL_LAYER_URL=redis://127.0.0.1:6379/9 .venv/bin/python bench/push.py --clients 2000

Latency runs from the moment the result's announcement starts (after its transaction commits,
``live.signals`` calls ``live.groups.announce``) to the moment each client has the message.
Memory per connection is the growth of daphne's resident memory from one connected client to N,
divided by N. The run is bounded (``--time-limit``) and shuts down cleanly: clients closed,
daphne stopped, the database dropped. Each client needs a file descriptor here and one in
daphne: ``ulimit -n`` must exceed N plus a margin (the script checks and raises its soft limit).
"""

import argparse
import asyncio
import contextlib
import os
import resource
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

import websockets  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from machine import cpu_model, database_url, free_port, wait_for  # noqa: E402

logging.disable(logging.INFO)


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_s(pid):
    """User + system CPU seconds of a process so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def raise_fd_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise SystemExit(f"ulimit -n is {soft} (hard {hard}); {needed} descriptors needed")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def build_tournament(n_results):
    """A public running tournament with enough matches for ``n_results`` results."""
    from tests.api import factories
    from tournaments.models import Tournament

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    lines = 2
    while lines * (lines - 1) // 2 < n_results:
        lines += 1
    tournament = factories.tournament(lines=lines)
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.RUNNING)
    return tournament, factories.matches(tournament)[:n_results]


class Clients:
    """N sockets in this process, each noting when it receives a message."""

    def __init__(self, url, origin, n, connect_concurrency):
        self.url, self.origin, self.n = url, origin, n
        self.gate = asyncio.Semaphore(connect_concurrency)
        self.sockets = []
        self.received = []  # per result round: list of perf_counter stamps
        self.readers = []
        self.round_done = None

    async def _connect_one(self):
        async with self.gate:
            return await websockets.connect(
                self.url, origin=self.origin, open_timeout=60, ping_interval=None, max_queue=4
            )

    async def connect(self, deadline):
        tasks = [asyncio.create_task(self._connect_one()) for _ in range(self.n)]
        done, pending = await asyncio.wait(tasks, timeout=max(1, deadline - time.monotonic()))
        for task in pending:
            task.cancel()
        self.sockets = [t.result() for t in done if not t.cancelled() and t.exception() is None]
        failures = [t.exception() for t in done if not t.cancelled() and t.exception()]
        return len(self.sockets), failures[:3]

    def start_round(self):
        self.received.append([])
        self.round_done = asyncio.Event()

    async def _read(self, sock):
        try:
            async for _message in sock:
                stamps = self.received[-1]
                stamps.append(time.perf_counter())
                if len(stamps) == len(self.sockets):
                    self.round_done.set()
        except websockets.ConnectionClosed:
            pass

    def listen(self):
        self.readers = [asyncio.create_task(self._read(sock)) for sock in self.sockets]

    async def close(self):
        await asyncio.gather(*(sock.close() for sock in self.sockets), return_exceptions=True)
        for reader in self.readers:
            reader.cancel()
        await asyncio.gather(*self.readers, return_exceptions=True)


async def run(args, port, server, tournament, matches):
    import live.signals
    from tests.tournaments.helpers import deals
    from tournaments.services import results

    announced = []
    original = live.signals.announce

    def timed_announce(tournament_id, what, **kwargs):
        if what == "result":
            announced.append(time.perf_counter())
        return original(tournament_id, what, **kwargs)

    live.signals.announce = timed_announce

    def enter(match):
        """The desk's way of entering a result, off the event loop (its own connection)."""
        from django.db import connection as thread_connection

        try:
            results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
        finally:
            thread_connection.close()

    deadline = time.monotonic() + args.time_limit
    url = f"ws://127.0.0.1:{port}/ws/t/{tournament.slug}/"
    origin = f"http://127.0.0.1:{port}"

    probe = await websockets.connect(url, origin=origin, ping_interval=None)
    await asyncio.sleep(0.5)
    rss_one = rss_kib(server.pid)
    clients = Clients(url, origin, args.clients, args.connect_concurrency)
    started = time.perf_counter()
    connected, failures = await clients.connect(deadline)
    connect_s = time.perf_counter() - started
    await probe.close()
    print(f"{connected}/{args.clients} clients connected in {connect_s:.1f} s", end="")
    print(f"; failures e.g. {failures}" if failures else "")
    if not connected:
        return
    await asyncio.sleep(1.0)  # let daphne settle (group joins, buffers)
    rss_all = rss_kib(server.pid)
    print(
        f"daphne RSS {rss_one / 1024:.1f} MiB with 1 client, {rss_all / 1024:.1f} MiB with "
        f"{connected}: {(rss_all - rss_one) / connected:.1f} KiB per connection"
    )

    clients.listen()
    all_latencies = []
    server_cpu = client_cpu = 0.0
    for number, match in enumerate(matches, start=1):
        if time.monotonic() > deadline:
            print("time limit reached")
            break
        clients.start_round()
        server_before, client_before = cpu_s(server.pid), own_cpu_s()
        await asyncio.to_thread(enter, match)
        with contextlib.suppress(TimeoutError):  # a client that missed it counts as missing
            await asyncio.wait_for(
                clients.round_done.wait(), timeout=max(0.1, min(30, deadline - time.monotonic()))
            )
        server_cpu += cpu_s(server.pid) - server_before
        client_cpu += own_cpu_s() - client_before
        stamps = clients.received[-1]
        latencies = [(stamp - announced[-1]) * 1000 for stamp in stamps]
        all_latencies.extend(latencies)
        print(
            f"result {number}: {len(stamps)}/{connected} clients, "
            f"median {statistics.median(latencies):.0f} ms, "
            f"p95 {percentile(latencies, 0.95):.0f} ms, max {max(latencies):.0f} ms"
        )
        await asyncio.sleep(args.pause)
    if all_latencies:
        rounds = len(clients.received)
        print(
            f"all {rounds} results, {len(all_latencies)} deliveries: "
            f"median {statistics.median(all_latencies):.0f} ms, "
            f"p95 {percentile(all_latencies, 0.95):.0f} ms; CPU per result: daphne "
            f"{server_cpu / rounds:.2f} s, clients {client_cpu / rounds:.2f} s"
        )
    started = time.perf_counter()
    await clients.close()
    print(f"clients closed in {time.perf_counter() - started:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--results", type=int, default=5, help="results entered, one at a time")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between results")
    parser.add_argument("--connect-concurrency", type=int, default=50)
    parser.add_argument("--time-limit", type=float, default=180.0, help="seconds, whole run")
    args = parser.parse_args()
    if connection.vendor == "sqlite":
        raise SystemExit("bench/push.py needs PostgreSQL in DATABASE_URL (daphne shares it)")
    layer_url = settings.CHANNEL_LAYER_URL
    if not layer_url:
        raise SystemExit("bench/push.py needs CHANNEL_LAYER_URL (Redis): the production layer")
    limit = raise_fd_limit(args.clients + 256)

    old_name = connection.settings_dict["NAME"]
    # Its own name: never the test suite's test_<name>, which a test run may be using.
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_pushbench"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    server = None
    try:
        tournament, matches = build_tournament(args.results)
        connection.close()
        port = free_port()
        env = dict(os.environ, DATABASE_URL=database_url(test_name), CONN_MAX_AGE="60")
        env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))  # daphne refuses the dev key
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port),
             "-v", "0", "config.asgi:application"],
            cwd=ROOT, env=env,
            preexec_fn=lambda: resource.setrlimit(
                resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
            ),
        )  # fmt: skip
        wait_for(port, time.monotonic() + 60, "daphne")
        print(
            f"daphne 127.0.0.1:{port} (1 process), channel layer {layer_url}, "
            f"database {test_name}; {args.clients} clients, {len(matches)} results; "
            f"ulimit -n {limit}"
        )
        asyncio.run(
            asyncio.wait_for(run(args, port, server, tournament, matches), args.time_limit + 30)
        )
        print(
            f"machine: {cpu_model()}, {os.cpu_count()} cores; load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {time.strftime('%Y-%m-%d')}"
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        print(f"dropped {test_name}")


if __name__ == "__main__":
    main()
