"""The fan-out's floor: the ``websockets`` library alone writing each frame (``bench/fanout.py``'s
``websockets`` mode, which starts it).

No ASGI and no Django: one asyncio server (``websockets.asyncio.server.serve`` on uvloop, as the
push runs, no per-message deflate) accepts the live pages' URL (``/ws/t/<slug>/?lang=``),
subscribes once per group to the Redis channel ``live/broadcast.py`` publishes the public
group's frame on, and hands each frame to ``websockets.broadcast``, which writes it to every
connection of the group without awaiting any (the text encoded once; each connection's sans-I/O
protocol adds its 4-byte header). What the push (``config/push.py``) spends above this
is the price of uvicorn's ASGI, Channels' consumers and the hub's ordering.

Not a product: no access check (the tournaments' ids come on the command line, where the push
reads them from the database at the handshake, which the bench does not count), no version
order, no reconnection when Redis goes.

    python bench/fanout_floor.py --port 8200 --redis redis://127.0.0.1:6379/12 \\
        --prefix scopa-live --tournament SLUG=ID
"""

import argparse
import asyncio
import logging
import sys
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import uvloop  # noqa: E402
from fanout_servers import arguments, public_group  # noqa: E402
from redis.asyncio import Redis  # noqa: E402
from websockets.asyncio.server import ServerConnection, broadcast, serve  # noqa: E402
from websockets.http11 import Request, Response  # noqa: E402

from live.broadcast import decode, redis_channel  # noqa: E402

logger = logging.getLogger(__name__)


class Floor:
    """The server's connections by group, and its one Redis subscription to their frames."""

    def __init__(self, redis_url: str, prefix: str, tournaments: dict[str, int], default: str):
        self.prefix, self.tournaments, self.default = prefix, tournaments, default
        self.groups: dict[str, set[ServerConnection]] = {}
        self.pubsub = Redis.from_url(redis_url, socket_timeout=None).pubsub(
            ignore_subscribe_messages=True
        )
        self.reader: asyncio.Task[None] | None = None

    def group_of(self, path: str) -> str | None:
        """The public group of ``/ws/t/<slug>/?lang=``."""
        url = urlsplit(path)
        return public_group(url.path, url.query, "ws", self.tournaments, self.default)

    def refuse_unknown(self, connection: ServerConnection, request: Request) -> Response | None:
        if self.group_of(request.path) is None:
            return connection.respond(HTTPStatus.NOT_FOUND, "no such tournament\n")
        return None

    async def handle(self, connection: ServerConnection) -> None:
        group = self.group_of(connection.request.path)  # type: ignore[union-attr]
        assert group is not None  # refuse_unknown let it through
        members = self.groups.get(group)
        if members is None:
            members = self.groups[group] = set()
            await self.pubsub.subscribe(redis_channel(self.prefix, group))
            if self.reader is None:
                self.reader = asyncio.create_task(self.read())
        members.add(connection)
        try:
            await connection.wait_closed()
        finally:
            members.discard(connection)

    async def read(self) -> None:
        start = len(redis_channel(self.prefix, ""))
        while True:
            message: Any = await self.pubsub.get_message(timeout=None)
            if message is None or message.get("type") != "message":
                continue
            group = message["channel"].decode()[start:]
            _version, frame = decode(message["data"].decode())
            members = self.groups.get(group)
            if members:
                # encoded once, written to each transport at once (no back-pressure: a slow
                # socket's frames pile up in its buffer)
                broadcast(members, frame.encode(), text=True)


async def main(args: argparse.Namespace, tournaments: dict[str, int]) -> None:
    floor = Floor(args.redis, args.prefix, tournaments, args.language)
    async with serve(
        floor.handle,
        args.host,
        args.port,
        compression=None,
        process_request=floor.refuse_unknown,
        backlog=4096,
    ) as server:
        await server.serve_forever()


if __name__ == "__main__":
    options, tournaments = arguments((__doc__ or "").splitlines()[0])
    logging.basicConfig(level=logging.WARNING)
    uvloop.run(main(options, tournaments))
