"""The push's fan-out options (issue 32) side by side, from group_send to the floor and SSE.

A server process (``config.asgi``; daphne unless said) on loopback per mode, each holding
``--clients`` clients (WebSockets; event streams for ``sse``) of its own public tournament:

- ``group_send`` (``LIVE_BROADCAST=0``, channels_redis's core layer): a Redis message per
  socket, each read, decoded and re-encoded by daphne;
- ``pubsub`` (``LIVE_BROADCAST=0``, channels_redis's pub/sub layer): one message per process,
  decoded once, but dispatched to each consumer, which encodes its JSON;
- ``broadcast`` (``live/broadcast.py``): one ``PUBLISH`` of the encoded frame, one
  subscription per group and process, the frame written to each local socket, by daphne;
- ``uvicorn``: the broadcast served by uvicorn with the ``websockets`` library's legacy protocol
  (``--ws websockets``, per-message deflate on);
- ``push`` (what a site runs, ``python -m config.push``): the broadcast served by uvicorn with
  websockets' sans-I/O protocol, no per-message deflate;
- ``websockets`` (``bench/fanout_floor.py``): the floor, the ``websockets`` library alone on
  the broadcast's Redis channel (no ASGI, no Django), each frame written by
  ``websockets.broadcast``, no deflate: what writing the frames costs;
- ``sse`` (``bench/fanout_sse.py``): Server-Sent Events, a bench-only ASGI app on uvicorn
  (uvloop, httptools) holding ``text/event-stream`` responses, each frame one ``data:`` event;
  its clients here read the chunked response with asyncio streams, a frame counted when its
  event's blank line arrives.

The last two take the tournament's id on the command line and check no access: their
handshakes, like everyone's, are not counted.

Results are announced the way a saved result is (``live.signals.announce_result``: the version
moved, the match's row rendered in both languages), to each server in turn, the order rotated
every result. For each result: the server's CPU seconds from the announcement until every one of
its clients holds the message (plus ``--settle`` seconds), and each client's latency. The figure
to read is CPU per result per 1,000 sockets: the machine is shared, wall times move with the
neighbours' load.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopa_bench \\
    CHANNEL_LAYER_URL=redis://127.0.0.1:6379/9 .venv/bin/python bench/fanout.py --clients 2000
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
from machine import cpu_model, database_url, free_port, load_average, wait_for  # noqa: E402

logging.disable(logging.INFO)
# each mode: its server's environment, and the layer this process announces through
PUBSUB = "channels_redis.pubsub.RedisPubSubChannelLayer"
CORE = "channels_redis.core.RedisChannelLayer"
MODES = {
    "group_send": ({"LIVE_BROADCAST": "0", "CHANNEL_LAYER_BACKEND": CORE}, CORE, False),
    "pubsub": ({"LIVE_BROADCAST": "0", "CHANNEL_LAYER_BACKEND": PUBSUB}, PUBSUB, False),
    "broadcast": ({"LIVE_BROADCAST": "1", "CHANNEL_LAYER_BACKEND": CORE}, CORE, True),
    # the same broadcast served by uvicorn (its websockets implementation) instead of daphne
    "uvicorn": ({"LIVE_BROADCAST": "1", "CHANNEL_LAYER_BACKEND": CORE}, CORE, True),
    "push": ({"LIVE_BROADCAST": "1", "CHANNEL_LAYER_BACKEND": CORE}, CORE, True),
    # bench-only servers on the broadcast's Redis channel: the floor, and Server-Sent Events
    "websockets": ({}, CORE, True),
    "sse": ({}, CORE, True),
}


def server_command(mode: str, port: int, slug: str, tournament_id: int) -> list[str]:
    bin_dir = Path(sys.executable).parent
    if mode in ("websockets", "sse"):
        script = ROOT / "bench" / ("fanout_floor.py" if mode == "websockets" else "fanout_sse.py")
        prefix = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "asgi")
        return [sys.executable, str(script), "--port", str(port), "--redis",
                settings.CHANNEL_LAYER_URL, "--prefix", prefix,
                "--tournament", f"{slug}={tournament_id}"]  # fmt: skip
    if mode == "push":
        return [sys.executable, "-m", "config.push", "--port", str(port), "--no-proxy"]
    if mode == "uvicorn":
        return [str(bin_dir / "uvicorn"), "config.asgi:application", "--host", "127.0.0.1",
                "--port", str(port), "--log-level", "warning", "--no-access-log",
                "--ws", "websockets"]  # fmt: skip
    return [str(bin_dir / "daphne"), "-b", "127.0.0.1", "-p", str(port), "-v", "0",
            "config.asgi:application"]  # fmt: skip


def cpu_s(pid):
    """A process's CPU seconds, all its threads, read from its CPU-time clock (the id glibc's
    clock_getcpuclockid gives, in nanoseconds); /proc's ticks (10 ms) where there is none: the
    floor spends about 20 ms on a result for 2,000 sockets."""
    with contextlib.suppress(OSError):
        return time.clock_gettime(((~pid) << 3) | 2)  # CPUCLOCK_SCHED of the process
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Room:
    """One server's clients: each notes when it holds the current result's message."""

    def __init__(self, mode, server, port, slug):
        self.mode, self.server, self.port = mode, server, port
        self.url = f"ws://127.0.0.1:{port}/ws/t/{slug}/?lang=it"
        self.origin = f"http://127.0.0.1:{port}"
        self.sockets, self.readers, self.stamps = [], [], []
        self.done = asyncio.Event()
        self.cpu, self.latencies, self.bytes = [], [], 0

    async def connect(self, n, gate):
        """Open ``n`` clients, ``gate`` bounding those opening at once; how many failed."""

        async def one():
            async with gate:
                return await self._open()

        tasks = [asyncio.create_task(one()) for _ in range(n)]
        await asyncio.wait(tasks)
        self.sockets = [t.result() for t in tasks if t.exception() is None]
        self.readers = [asyncio.create_task(self._read(client)) for client in self.sockets]
        return n - len(self.sockets)

    async def _open(self):
        return await websockets.connect(
            self.url, origin=self.origin, open_timeout=60, ping_interval=None
        )

    async def _read(self, sock):
        with contextlib.suppress(websockets.ConnectionClosed):
            async for message in sock:
                self._heard(len(message))

    def _heard(self, size):
        """A client holds the current result's message (``size`` bytes)."""
        self.stamps.append(time.perf_counter())
        self.bytes += size
        if len(self.stamps) == len(self.sockets):
            self.done.set()

    async def close(self):
        await asyncio.gather(*(sock.close() for sock in self.sockets), return_exceptions=True)
        for reader in self.readers:
            reader.cancel()


class SseRoom(Room):
    """One SSE server's clients: an asyncio stream each, reading the chunked response; a frame
    is counted when its event's blank line arrives."""

    def __init__(self, mode, server, port, slug):
        super().__init__(mode, server, port, slug)
        self.request = (
            f"GET /sse/t/{slug}/?lang=it HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Accept: text/event-stream\r\nOrigin: {self.origin}\r\n\r\n"
        ).encode()

    async def _open(self):
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), 60)
        writer.write(self.request)
        status = await reader.readline()
        if not status.startswith(b"HTTP/1.1 200"):
            writer.close()
            raise ConnectionError(status.decode("latin-1").strip())
        chunked = False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            chunked |= line.lower() == b"transfer-encoding: chunked\r\n"
        if not chunked:
            writer.close()
            raise ConnectionError("the event stream is not chunked")
        return reader, writer

    async def _read(self, stream):
        reader, _writer = stream
        pending = b""
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, ValueError):
            while size := int((await reader.readline()).split(b";")[0], 16):
                pending += (await reader.readexactly(size + 2))[:-2]
                while (end := pending.find(b"\n\n")) >= 0:
                    event, pending = pending[: end + 2], pending[end + 2 :]
                    if event.startswith(b":"):  # a comment: the stream's opening
                        continue
                    self._heard(len(event))

    async def close(self):
        for _reader, writer in self.sockets:
            writer.close()
        await asyncio.gather(
            *(writer.wait_closed() for _reader, writer in self.sockets), return_exceptions=True
        )
        for reader in self.readers:
            reader.cancel()


def announce(mode, tournament_id, match_id):
    """As a saved result does, in a thread of its own (its database connection closed), through
    the mode's layer or the broadcast."""
    from channels.layers import channel_layers
    from django.db import connection as thread_connection

    from live.signals import announce_result

    _env, backend, broadcasting = MODES[mode]
    settings.LIVE_BROADCAST = broadcasting
    if settings.CHANNEL_LAYERS["default"]["BACKEND"] != backend:
        settings.CHANNEL_LAYERS["default"]["BACKEND"] = backend
        channel_layers.backends.clear()
    try:
        announce_result(tournament_id, [match_id])
    finally:
        thread_connection.close()


async def run(args, rooms, tournaments):

    gate = asyncio.Semaphore(args.connect_concurrency)
    for room in rooms.values():
        before = rss_kib(room.server.pid)
        failed = await room.connect(args.clients, gate)
        await asyncio.sleep(1.0)
        room.kib_per_socket = (rss_kib(room.server.pid) - before) / max(1, len(room.sockets))
        print(f"{room.mode}: {len(room.sockets)} clients connected, {failed} failed")
    # a result each first, not counted: this process's first announcement starts its sending
    # loop and Redis connection (live/groups.py) and renders cold, hundreds of milliseconds
    # that fell on the first server's first result
    for mode, room in rooms.items():
        room.stamps, room.done = [], asyncio.Event()
        await asyncio.to_thread(announce, mode, *tournaments[mode])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(room.done.wait(), 30)
        await asyncio.sleep(args.pause)
    for room in rooms.values():
        room.bytes = 0
    print(f"start: {load_average()}")
    own_before = own_cpu_s()
    for number in range(args.results):
        modes = list(rooms)
        for mode in modes[number % len(modes) :] + modes[: number % len(modes)]:
            room, (tournament_id, match_id) = rooms[mode], tournaments[mode]
            room.stamps, room.done = [], asyncio.Event()
            before = cpu_s(room.server.pid)
            started = time.perf_counter()
            await asyncio.to_thread(announce, mode, tournament_id, match_id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(room.done.wait(), 30)
            await asyncio.sleep(args.settle)
            room.cpu.append(cpu_s(room.server.pid) - before)
            room.latencies.extend((stamp - started) * 1000 for stamp in room.stamps)
            missing = len(room.sockets) - len(room.stamps)
            print(
                f"result {number + 1} {mode}: {len(room.stamps)}/{len(room.sockets)}"
                f"{f' ({missing} missing)' if missing else ''}, p95 "
                f"{percentile(room.latencies[-len(room.stamps) or None :] or [0], 0.95):.0f} ms,"
                f" CPU {room.cpu[-1] * 1000:.0f} ms"
            )
            await asyncio.sleep(args.pause)
    print(f"end: {load_average()}")
    print(
        f"this process (the clients and the announcements): "
        f"{(own_cpu_s() - own_before) / args.results / len(rooms):.2f} CPU-s a result"
    )
    print(f"\n{args.results} results each, {args.clients} clients a server")
    for mode, room in rooms.items():
        per_k = [cpu * 1000 / len(room.sockets) * 1000 for cpu in room.cpu]
        print(
            f"{mode}: CPU a result per 1,000 sockets median {statistics.median(per_k):.0f} ms"
            f" ({min(per_k):.0f}-{max(per_k):.0f}); latency p50 "
            f"{statistics.median(room.latencies):.0f} / p95 {percentile(room.latencies, 0.95):.0f}"
            f" / max {max(room.latencies):.0f} ms; "
            f"{room.bytes / args.results / len(room.sockets):.0f} B a socket a result; "
            f"server memory {room.kib_per_socket:.1f} KiB a socket"
        )
    for room in rooms.values():
        await room.close()
    await asyncio.sleep(2)  # let the servers see the sockets go before they stop


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1000, help="per server")
    parser.add_argument("--results", type=int, default=10, help="per server")
    parser.add_argument("--pause", type=float, default=0.3)
    parser.add_argument("--settle", type=float, default=0.2, help="CPU counted after the last")
    parser.add_argument("--connect-concurrency", type=int, default=50)
    parser.add_argument("--modes", default=",".join(MODES), help="of " + ", ".join(MODES))
    args = parser.parse_args()
    modes = args.modes.split(",")
    if connection.vendor == "sqlite":
        raise SystemExit("bench/fanout.py needs PostgreSQL in DATABASE_URL (the servers share it)")
    layer_url = settings.CHANNEL_LAYER_URL
    if not layer_url:
        raise SystemExit("bench/fanout.py needs CHANNEL_LAYER_URL (Redis)")
    needed = len(modes) * args.clients + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))

    from tests.api import factories
    from tournaments.models import Tournament

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_fanoutbench"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    servers = []
    try:
        tournaments = {}
        for mode in modes:
            tournament = factories.tournament(lines=2)
            Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.RUNNING)
            tournaments[mode] = (tournament.pk, factories.matches(tournament)[0].pk, tournament)
        connection.close()
        rooms = {}
        for mode in modes:
            port = free_port()
            env = dict(os.environ, DATABASE_URL=database_url(test_name), CONN_MAX_AGE="60")
            env.update(MODES[mode][0])
            env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
            slug, tournament_id = tournaments[mode][2].slug, tournaments[mode][0]
            server = subprocess.Popen(
                server_command(mode, port, slug, tournament_id),
                cwd=ROOT, env=env,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard)),
            )  # fmt: skip
            servers.append(server)
            wait_for(port, time.monotonic() + 60, mode)
            rooms[mode] = (SseRoom if mode == "sse" else Room)(mode, server, port, slug)
        print(
            f"{len(modes)} servers, channel layer {layer_url}, database {test_name}; machine: "
            f"{cpu_model()}, {os.cpu_count()} cores; "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        )
        asyncio.run(run(args, rooms, {mode: t[:2] for mode, t in tournaments.items()}))
    finally:
        for server in servers:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:  # uvicorn waits for its sockets to close
                server.kill()
                server.wait()
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        print(f"dropped {test_name}")


if __name__ == "__main__":
    main()
