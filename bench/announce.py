"""CPU of announcing a result to the live pages from synchronous code (a Celery worker, a view).

``live.groups.announce`` sends through an event loop of the process's own; before 2026-11-24
evening it called ``async_to_sync(layer.group_send)``, which makes an event loop for every call
and, with channels_redis, a Redis connection pool (so a connection) for every loop. This script
times both ways in one process, alternated, on the Redis channel layer with one listener in the
group, and reports CPU (this process, user + system) and wall time per announcement, and the
Redis connections each way opened:

    CHANNEL_LAYER_URL=redis://127.0.0.1:6379/9 .venv/bin/python bench/announce.py --calls 300

Needs Redis; the database is not touched.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import logging  # noqa: E402

import redis  # noqa: E402
from asgiref.sync import async_to_sync  # noqa: E402
from channels.layers import get_channel_layer  # noqa: E402
from django.conf import settings  # noqa: E402
from machine import cpu_model, load_average  # noqa: E402

from live.groups import MESSAGE_TYPE, announce, group_name  # noqa: E402

TOURNAMENT = 424242
logging.disable(logging.INFO)


def loop_per_call(tournament_id: int, what: str) -> None:
    """The way before: a new event loop (and Redis connection) for every announcement."""
    layer = get_channel_layer()
    async_to_sync(layer.group_send)(
        group_name(tournament_id, "it"), {"type": MESSAGE_TYPE, "what": what}
    )


def timed(send, calls: int, server) -> tuple[float, float, int]:
    opened = server.info("stats")["total_connections_received"]
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        send(TOURNAMENT, "result")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    opened = server.info("stats")["total_connections_received"] - opened
    return cpu * 1000 / calls, wall * 1000 / calls, opened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if "RedisChannelLayer" not in settings.CHANNEL_LAYERS["default"]["BACKEND"]:
        sys.exit("set CHANNEL_LAYER_URL to a Redis database: this measures the Redis layer")
    layer = get_channel_layer()
    server = redis.Redis.from_url(os.environ["CHANNEL_LAYER_URL"])

    async def listen():
        channel = await layer.new_channel()
        await layer.group_add(group_name(TOURNAMENT, "it"), channel)
        return channel

    layer.capacity = 10 * args.calls * args.rounds + 10  # the listener never reads: room for all
    async_to_sync(listen)()
    announce(TOURNAMENT, "result")  # warm-up
    figures: dict[str, list[tuple[float, float, int]]] = {"loop per call": [], "own loop": []}
    for _ in range(args.rounds):
        figures["loop per call"].append(timed(loop_per_call, args.calls, server))
        figures["own loop"].append(timed(announce, args.calls, server))

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {load_average()}")
    print(f"{args.rounds} rounds of {args.calls} announcements each way, alternated")
    for name, rows in figures.items():
        cpu = [r[0] for r in rows]
        wall = [r[1] for r in rows]
        opened = [r[2] for r in rows]
        print(
            f"{name}: CPU {statistics.median(cpu):.3f} ms an announcement "
            f"(range {min(cpu):.3f}–{max(cpu):.3f}), wall {statistics.median(wall):.3f} ms, "
            f"Redis connections opened a round: {opened}"
        )
    ratio = statistics.median(r[0] for r in figures["loop per call"]) / statistics.median(
        r[0] for r in figures["own loop"]
    )
    print(f"CPU, loop per call / own loop: {ratio:.1f}")


if __name__ == "__main__":
    main()
