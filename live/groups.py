"""The channel-layer groups of a tournament's live pages, and the one message sent to them.

A public group per tournament and language, ``tournament.<id>.<lang>``, hears what changes its
public pages (a result, with the changed rows rendered in that language; a stage);
``desk.<id>`` hears what only the desk shows (a change-log entry, a record refused or in error).
A desk socket joins both (in its page's language); a public page's socket only the first, so it
never carries what only the desk may see.
"""

import asyncio
import enum
import json
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings

from live import broadcast, patches

logger = logging.getLogger(__name__)

MESSAGE_TYPE = "tournament.changed"


class LiveEvent(enum.StrEnum):
    """What changed, sent as the message's ``what``: the one list of the live pages' events."""

    RESULT = "result"  # a match's result: every page of the tournament
    STAGE = "stage"  # a stage opened, closed or reopened: every page
    LOG = "log"  # a change-log entry: the desk only
    RECORD = "record"  # a record refused or in error, waiting on the desk: the desk only
    ROLES = "roles"  # a role taken back: the desk's sockets check their user (nothing to show)

    @property
    def desk_only(self) -> bool:
        return self in (LiveEvent.LOG, LiveEvent.RECORD, LiveEvent.ROLES)


SEND_TIMEOUT_S = 5.0


class _SendingLoop:
    """An event loop of this process's own, in a thread of its own, that sends to the channel
    layer for synchronous code (views, Celery workers). ``async_to_sync`` there makes a new loop
    for every call, and channels_redis a new connection pool for every loop: each result
    announced cost a Redis connection and a loop. A forked child (a Celery pool process) starts
    its own loop on its first send."""

    def __init__(self) -> None:
        self._forget()
        os.register_at_fork(after_in_child=self._forget)
        self._pending: set[asyncio.Task[None]] = set()

    def _forget(self) -> None:
        # in a forked child the parent's thread is gone, and its lock may be held for ever
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def run(self, send: Callable[[], Coroutine[Any, Any, None]], timeout: float) -> None:
        """Run the coroutine ``send()`` makes; wait for it up to ``timeout`` seconds (cancelled
        then). Called from a coroutine's thread (an async view), it becomes a task of that
        loop instead, which must not wait for it."""
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is not None:
            task = current.create_task(send())
            self._pending.add(task)
            task.add_done_callback(self._sent)
            return
        future = asyncio.run_coroutine_threadsafe(send(), self._running())
        try:
            future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("live: could not announce", exc_info=task.exception())

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="live-sending-loop", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop


_sending_loop = _SendingLoop()


def languages() -> list[str]:
    return [code for code, _name in settings.LANGUAGES]


def page_language(requested: str) -> str:
    """The language a socket's page is in (``?lang=``), or the site's default."""
    return requested if requested in languages() else settings.LANGUAGE_CODE


def group_name(tournament_id: int, language: str) -> str:
    return f"tournament.{tournament_id}.{language}"


def desk_group_name(tournament_id: int) -> str:
    return f"desk.{tournament_id}"


def announce(
    tournament_id: int,
    event: LiveEvent,
    *,
    version: int | None = None,
    match_ids: list[int] | None = None,
) -> None:
    """Tell every connected page of the tournament (or, for a desk-only event, its desk) what
    changed; never raises. A result carries the version it brings the pages to and, per
    language, the changed rows (``patches``) when they fit the byte budget."""
    layer = get_channel_layer()
    if layer is None:
        return
    what = LiveEvent(event)
    targets = _targets(tournament_id, what)
    if isinstance(layer, InMemoryChannelLayer) and not any(
        layer.groups.get(group) or broadcast.listening_here(group) for group, _language in targets
    ):
        # In memory, only this process's sockets hear it: a worker has none, and rendering
        # the rows for nobody cost it more CPU than the result's own writes.
        return
    # the rows of every language at once: the matches are read once, not once a language
    by_language = (
        patches.rows_by_language(match_ids, languages()) if match_ids and not what.desk_only else {}
    )
    sends: list[tuple[str, dict[str, Any]]] = []
    for group, language in targets:
        message: dict[str, Any] = {"type": MESSAGE_TYPE, "what": what.value}
        if language is not None:  # a public group: the version, and the rows when they fit
            if version is not None:
                message["v"] = version
            rows = by_language.get(language)
            if rows is not None:
                message["rows"] = rows
        sends.append((group, message))
    # the public groups' frames, encoded once here, go through the broadcast when it is on
    frames = [
        (group, json.dumps(frame_of(message)), message.get("v"))
        for group, message in sends
        if not what.desk_only and broadcast.enabled()
    ]
    layered = [] if frames else sends
    try:
        if isinstance(layer, InMemoryChannelLayer):
            for group, frame, version in frames:
                broadcast.deliver_here(group, frame, version)
            # Its queues belong to the server's loop, which async_to_sync finds from a view;
            # a process without sockets (a worker) has nobody to tell.
            for group, message in layered:
                if layer.groups.get(group):
                    async_to_sync(layer.group_send)(group, message)
        else:

            async def send_all() -> None:
                for group, frame, version in frames:
                    await broadcast.publish(group, frame, version)
                for group, message in layered:
                    await layer.group_send(group, message)

            _sending_loop.run(send_all, SEND_TIMEOUT_S)
    except Exception:  # the push is a convenience: polling still refreshes the pages
        logger.exception("live: could not announce %s for tournament %s", what, tournament_id)


def _targets(tournament_id: int, what: LiveEvent) -> list[tuple[str, str | None]]:
    """The groups an event goes to, each with its language: the desk's alone (None) for a
    desk-only event, else the public group of every language."""
    if what.desk_only:
        return [(desk_group_name(tournament_id), None)]
    return [(group_name(tournament_id, language), language) for language in languages()]


def frame_of(event: dict[str, Any]) -> dict[str, Any]:
    """What a page's socket receives for a group's message (``public/static/js/live.js``)."""
    message: dict[str, Any] = {"type": "changed", "what": event.get("what", "")}
    if "v" in event:
        message["v"] = event["v"]
    if "rows" in event:
        message["rows"] = event["rows"]
    return message
