"""The public pages' messages, encoded once and written to every local socket (issue 32).

The channel layer's ``group_send`` reaches a group's sockets one by one: channels_redis stores a
message per socket in Redis, and the push process reads, decodes, dispatches and re-encodes each
(0.57 ms of CPU a socket, so 2,000 spectators heard a result after tens of seconds). Here a
public group's message (``tournament.<id>.<lang>``, content every public page may show) is one
Redis ``PUBLISH`` of the frame already encoded; each push process subscribes once per group it
has sockets in and writes that frame to them (``bench/fanout.py`` measures both, side by side).
Without Redis (the in-memory layer: one process) ``announce`` hands the frame to this process's
hubs directly. The desk's own group and its access checks stay on the channel layer.

Versions reach a page in order: two results saved at once move the version to 11 and 12, and
their messages may be published 12 first (each renders its rows after the bump). A hub holds a
message that skips a version for up to ``HOLD_S`` seconds waiting for the one it skips, then
sends what it holds in order (a lost message then costs the pages one refetch, as before).

If the subscription fails (Redis restarted), the hub closes its sockets: the pages poll and
reconnect with their jittered back-off, and the new sockets subscribe again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

logger = logging.getLogger(__name__)

HOLD_S = 0.5  # how long a message that skips a version waits for the skipped one
CLOSE_CODE = 1012  # "service restart": the page reconnects (public/static/js/live.js)


class Listener(Protocol):
    """What a hub needs of a socket: a way to give it an ASGI message (a consumer's own)."""

    async def hear(self, message: dict[str, Any]) -> None: ...


def enabled() -> bool:
    """Whether public groups go through the broadcast: ``LIVE_BROADCAST`` (on by default) with
    the Redis layer of channels_redis or the in-memory layer; any other layer (a test's stub)
    keeps ``group_send``."""
    return getattr(settings, "LIVE_BROADCAST", True) and _config() is not None


def _config() -> tuple[str, str] | None:
    """(Redis URL or "" in memory, channel prefix), or None for a layer the broadcast cannot
    follow."""
    layer = settings.CHANNEL_LAYERS.get("default", {})
    backend = layer.get("BACKEND", "")
    if backend == "channels.layers.InMemoryChannelLayer":
        return "", ""
    if backend.startswith("channels_redis."):
        config = layer.get("CONFIG", {})
        host = config.get("hosts", [{}])[0]
        address = host.get("address", "") if isinstance(host, dict) else str(host)
        if address:
            return address, str(config.get("prefix", "asgi"))
    return None


def redis_channel(prefix: str, group: str) -> str:
    return f"{prefix}:broadcast:{group}"


def encode(version: int | None, frame: str) -> str:
    """What is published: the version (empty when none) and the frame, on one line each."""
    return f"{'' if version is None else version}\n{frame}"


def decode(payload: str) -> tuple[int | None, str]:
    head, _newline, frame = payload.partition("\n")
    return (int(head) if head else None), frame


@dataclass
class _Group:
    listeners: set[Listener] = field(default_factory=set)
    last: int | None = None  # the newest version sent to these sockets
    held: dict[int, str] = field(default_factory=dict)  # version -> frame, waiting for a gap
    timer: asyncio.TimerHandle | None = None


class Hub:
    """One event loop's sockets by public group, and its one subscription to their messages."""

    def __init__(self, loop: asyncio.AbstractEventLoop, url: str, prefix: str) -> None:
        self.loop, self.url, self.prefix = loop, url, prefix
        self.groups: dict[str, _Group] = {}
        self._lock = asyncio.Lock()
        self._pubsub: Any = None
        self._client: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._writes: asyncio.Queue[tuple[list[Listener], str]] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    # -- sockets coming and going

    async def join(
        self, group: str, listener: Listener, baseline: Callable[[], Awaitable[int | None]]
    ) -> None:
        """Add a socket to ``group``; the first one subscribes, then reads the version the
        pages are at (``baseline``), from which the hub keeps them in order."""
        async with self._lock:
            known = self.groups.get(group)
            if known is not None:
                known.listeners.add(listener)
                return
            entry = _Group(listeners={listener})
            self.groups[group] = entry
            if self.url:
                try:
                    await self._subscribe(group)
                except BaseException:
                    del self.groups[group]
                    raise
            with contextlib.suppress(Exception):  # no cache: the first message sets it
                current = await baseline()
                if entry.last is None:
                    entry.last = current

    async def leave(self, group: str, listener: Listener) -> None:
        async with self._lock:
            entry = self.groups.get(group)
            if entry is None:
                return
            entry.listeners.discard(listener)
            if entry.listeners:
                return
            del self.groups[group]
            if entry.timer is not None:
                entry.timer.cancel()
            if self._pubsub is not None:
                if self.groups:
                    with contextlib.suppress(Exception):
                        await self._pubsub.unsubscribe(redis_channel(self.prefix, group))
                else:
                    await self._stop_reading()

    async def _subscribe(self, group: str) -> None:
        if self._pubsub is None:
            from redis.asyncio import Redis

            # no read timeout: the subscription waits for messages as long as sockets listen
            self._client = Redis.from_url(self.url, socket_timeout=None, socket_keepalive=True)
            self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await self._pubsub.subscribe(redis_channel(self.prefix, group))
            except BaseException:
                await self._stop_reading()  # the next socket tries a new connection
                raise
            self._reader = self.loop.create_task(self._read(self._pubsub))
        else:
            await self._pubsub.subscribe(redis_channel(self.prefix, group))

    async def _stop_reading(self) -> None:
        reader, pubsub, client = self._reader, self._pubsub, self._client
        self._reader = self._pubsub = self._client = None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
        with contextlib.suppress(Exception):
            await pubsub.aclose()
            await client.aclose()

    async def _read(self, pubsub: Any) -> None:
        start = len(self.prefix) + len(":broadcast:")
        try:
            while True:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=None)
                if message is None or message.get("type") != "message":
                    continue
                channel, data = message["channel"], message["data"]
                group = (channel.decode() if isinstance(channel, bytes) else channel)[start:]
                version, frame = decode(data.decode() if isinstance(data, bytes) else data)
                self.deliver(group, frame, version)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("live: the broadcast subscription failed; closing its sockets")
            await self._fail()

    async def _fail(self) -> None:
        async with self._lock:
            everyone = [listener for entry in self.groups.values() for listener in entry.listeners]
            self.groups.clear()
            await self._stop_reading()
        for listener in everyone:
            with contextlib.suppress(Exception):
                await listener.hear({"type": "websocket.close", "code": CLOSE_CODE})

    # -- messages

    def deliver(self, group: str, frame: str, version: int | None) -> None:
        """Send ``frame`` to the group's sockets, in version order (in the hub's loop)."""
        entry = self.groups.get(group)
        if entry is None:
            return
        if version is not None and entry.last is not None and version > entry.last + 1:
            entry.held[version] = frame  # a gap: the skipped version may be on its way
            if entry.timer is None:
                entry.timer = self.loop.call_later(HOLD_S, self._give_up, group)
            return
        self._write(entry, frame)
        if version is not None and (entry.last is None or version > entry.last):
            entry.last = version
        while entry.last is not None and entry.last + 1 in entry.held:
            entry.last += 1
            self._write(entry, entry.held.pop(entry.last))
        if not entry.held and entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None

    def _give_up(self, group: str) -> None:
        """The skipped version did not come: send what was held, in order (the pages that see
        the gap fetch themselves once)."""
        entry = self.groups.get(group)
        if entry is None:
            return
        entry.timer = None
        for version in sorted(entry.held):
            self._write(entry, entry.held.pop(version))
            entry.last = version

    def _write(self, entry: _Group, frame: str) -> None:
        # one writer task per hub: frames leave in the order they were decided
        self._writes.put_nowait((list(entry.listeners), frame))
        if self._writer is None or self._writer.done():
            self._writer = self.loop.create_task(self._write_all())

    async def _write_all(self) -> None:
        while not self._writes.empty():
            listeners, frame = self._writes.get_nowait()
            message = {"type": "websocket.send", "text": frame}
            for listener in listeners:
                try:
                    await listener.hear(message)
                except Exception:  # a socket gone meanwhile
                    logger.debug("live: a socket refused a frame", exc_info=True)


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()


def hub() -> Hub:
    """The running loop's hub (a push process has one loop; a test may run several)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    config = _config() or ("", "")
    if found is None or ((found.url, found.prefix) != config and not found.groups):
        found = _hubs[loop] = Hub(loop, *config)
    return found


def listening_here(group: str) -> bool:
    """Whether a socket of this process (a hub of one of its loops) is in ``group``."""
    return any(not loop.is_closed() and group in each.groups for loop, each in list(_hubs.items()))


def deliver_here(group: str, frame: str, version: int | None) -> None:
    """Without Redis: hand the frame to every hub of this process, each in its own loop."""
    for loop, each in list(_hubs.items()):
        if loop.is_closed() or group not in each.groups:
            continue
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            each.deliver(group, frame, version)
        else:
            loop.call_soon_threadsafe(each.deliver, group, frame, version)


# -- publishing (any process: a web thread, a worker)

_publishers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[str, Any]] = (
    weakref.WeakKeyDictionary()
)


async def publish(group: str, frame: str, version: int | None) -> None:
    """One ``PUBLISH`` of the encoded frame, through the calling loop's own Redis client."""
    config = _config()
    if config is None or not config[0]:
        deliver_here(group, frame, version)
        return
    url, prefix = config
    loop = asyncio.get_running_loop()
    known = _publishers.get(loop)
    if known is None or known[0] != url:
        from redis.asyncio import Redis

        known = _publishers[loop] = (url, Redis.from_url(url, socket_timeout=30))
    await known[1].publish(redis_channel(prefix, group), encode(version, frame))
