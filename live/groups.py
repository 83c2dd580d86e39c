"""The channel-layer groups of a tournament's live pages, and the one message sent to them.

Two groups per tournament: ``tournament.<id>`` hears what changes its public pages (a result, a
stage), ``desk.<id>`` hears what only the desk shows (a change-log entry, a record refused or in
error). A desk socket joins both; a public page's socket only the first.
"""

import asyncio
import logging
import os
import threading

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger(__name__)

MESSAGE_TYPE = "tournament.changed"
SEND_TIMEOUT_S = 5.0


class _SendingLoop:
    """An event loop of this process's own, in a thread of its own, that sends to the channel
    layer for synchronous code (views, Celery workers). ``async_to_sync`` there makes a new loop
    for every call, and channels_redis a new connection pool for every loop: each result
    announced cost a Redis connection and a loop. A forked process (a Celery pool process)
    starts its own loop on its first send."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid: int | None = None

    def run(self, coroutine, timeout: float):
        return asyncio.run_coroutine_threadsafe(coroutine, self._running()).result(timeout)

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="live-sending-loop", daemon=True
                ).start()
                self._loop, self._pid = loop, os.getpid()
            return self._loop


_sending_loop = _SendingLoop()


def group_name(tournament_id: int) -> str:
    return f"tournament.{tournament_id}"


def desk_group_name(tournament_id: int) -> str:
    return f"desk.{tournament_id}"


def announce(tournament_id: int, what: str, *, desk_only: bool = False) -> None:
    """Tell every connected page of the tournament (or only its desk) to refresh; never raises."""
    layer = get_channel_layer()
    if layer is None:
        return
    group = desk_group_name(tournament_id) if desk_only else group_name(tournament_id)
    message = {"type": MESSAGE_TYPE, "what": what}
    try:
        if isinstance(layer, InMemoryChannelLayer):
            # Its queues belong to the server's loop, which async_to_sync finds from a view;
            # a process without sockets (a worker) has nobody to tell.
            if layer.groups.get(group):
                async_to_sync(layer.group_send)(group, message)
        else:
            _sending_loop.run(layer.group_send(group, message), SEND_TIMEOUT_S)
    except Exception:  # the push is a convenience: polling still refreshes the pages
        logger.exception("live: could not announce %s for tournament %s", what, tournament_id)
