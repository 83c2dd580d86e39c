"""Server-Sent Events instead of WebSockets: the fan-out over ``text/event-stream`` responses
(``bench/fanout.py``'s ``sse`` mode, which starts it).

A bench-only ASGI app served by uvicorn with what ``config/push.py`` sets where it applies
(uvloop, httptools, no access log, no lifespan, backlog 4,096): each ``GET /sse/t/<slug>/?lang=``
is an open chunked response; the app subscribes once per group to the Redis channel
``live/broadcast.py`` publishes the public group's frame on and writes each frame, encoded once
as one ``data:`` event, to every open response of the group. No Django: it answers what the
transport costs, next to the push's WebSockets and the ``websockets`` floor
(``bench/fanout_floor.py``).

Not a product: no access check (the tournaments' ids come on the command line), no version
order, no ``Last-Event-ID``, no reconnection when Redis goes.

    python bench/fanout_sse.py --port 8200 --redis redis://127.0.0.1:6379/12 \\
        --prefix scopa-live --tournament SLUG=ID
"""

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import uvicorn  # noqa: E402
from fanout_servers import arguments, public_group  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from live.broadcast import decode, redis_channel  # noqa: E402

logger = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], Awaitable[None]]
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # a proxy must not hold the events back (nginx)
]


def event(frame: str) -> bytes:
    """One ``data:`` event: a line per line of the frame (a JSON frame has one), a blank line."""
    return "".join(f"data: {line}\n" for line in frame.split("\n")).encode() + b"\n"


class Streams:
    """The open responses by group, and the app's one Redis subscription to their frames."""

    def __init__(self, redis_url: str, prefix: str, tournaments: dict[str, int], default: str):
        self.prefix, self.tournaments, self.default = prefix, tournaments, default
        self.groups: dict[str, set[Send]] = {}
        self.redis_url = redis_url
        self.pubsub: Any = None
        self.reader: asyncio.Task[None] | None = None

    def group_of(self, scope: dict[str, Any]) -> str | None:
        """The public group of ``/sse/t/<slug>/?lang=``."""
        query = scope.get("query_string", b"").decode("latin-1")
        return public_group(scope["path"], query, "sse", self.tournaments, self.default)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Send) -> None:
        if scope["type"] != "http":
            return
        group = self.group_of(scope)
        if group is None or scope["method"] != "GET":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        # a comment first: the client knows the stream is open (and the headers left)
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        members = self.groups.get(group)
        if members is None:
            members = self.groups[group] = set()
            await self.subscribe(group)
        members.add(send)
        try:
            while (await receive())["type"] != "http.disconnect":
                pass
        finally:
            members.discard(send)

    async def subscribe(self, group: str) -> None:
        if self.pubsub is None:
            client = Redis.from_url(self.redis_url, socket_timeout=None)
            self.pubsub = client.pubsub(ignore_subscribe_messages=True)
            await self.pubsub.subscribe(redis_channel(self.prefix, group))
            self.reader = asyncio.create_task(self.read())
        else:
            await self.pubsub.subscribe(redis_channel(self.prefix, group))

    async def read(self) -> None:
        start = len(redis_channel(self.prefix, ""))
        while True:
            message = await self.pubsub.get_message(timeout=None)
            if message is None or message.get("type") != "message":
                continue
            group = message["channel"].decode()[start:]
            _version, frame = decode(message["data"].decode())
            body = {"type": "http.response.body", "body": event(frame), "more_body": True}
            # in turn, as the hub's writer does (live/broadcast.py): each send writes the
            # chunk at once unless that socket's buffer is full
            for send in list(self.groups.get(group, ())):
                try:
                    await send(body)
                except Exception:  # a response gone meanwhile
                    logger.debug("sse: a response refused a frame", exc_info=True)


def main() -> None:
    args, tournaments = arguments((__doc__ or "").splitlines()[0])
    app = Streams(args.redis, args.prefix, tournaments, args.language)
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        loop="uvloop",
        http="httptools",
        ws="none",
        lifespan="off",
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_graceful_shutdown=3,
    )


if __name__ == "__main__":
    main()
