"""Live pages: a result entered through the API reaches a connected WebSocket within a second
(a real server, the site's push and daphne; the Redis channel layer when the environment has
Redis, the in-memory one otherwise); the sockets follow the access policy (public pages, the
desk)."""

import asyncio
import functools
import json
import threading

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.urls import reverse

from config.asgi import application
from tests.api import factories
from tests.conftest import require_shared_database
from tests.tournaments.helpers import deals
from tournaments.models import Match

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]


@pytest.mark.parametrize("server", ["push_server", "daphne_server"])
def test_a_result_entered_through_the_api_reaches_a_connected_socket(server, request):
    """An API client's POST to a real server, the site's push (``config.push``) or daphne (the
    development server's); a WebSocket client of that server (through the Redis channel layer
    when the environment has Redis) hears it within a second."""
    require_shared_database()
    daphne_server = request.getfixturevalue(server)
    import requests
    import websockets
    from rest_framework.authtoken.models import Token

    organizer = factories.user("organizer", is_staff=True)
    token = Token.objects.create(user=organizer).key
    tournament = factories.tournament(lines=2, organizer=organizer)
    match = factories.matches(tournament)[0]
    url = f"http://{daphne_server}" + reverse("match-records", kwargs={"match_id": match.pk})
    record = json.dumps(factories.record(tournament))
    post = functools.partial(
        requests.post,
        url,
        data=record,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        timeout=10,
    )

    async def scenario():
        socket_url = f"ws://{daphne_server}/ws/t/{tournament.slug}/"
        async with websockets.connect(socket_url, origin="http://127.0.0.1") as socket:
            if server == "push_server":  # a frame is not compressed again for every socket
                assert "Sec-WebSocket-Extensions" not in socket.response.headers
            response = await asyncio.to_thread(post)
            assert response.status_code == 202, response.content
            # The result is in force once the POST has answered (eager verification); the
            # push must arrive within a second of that.
            return json.loads(await asyncio.wait_for(socket.recv(), timeout=1))

    message = asyncio.run(scenario())
    assert message["type"] == "changed" and message["what"] == "result"
    assert message["v"] == 1  # the first result of the tournament
    (row,) = message["rows"]  # the match's row, as the round page shows it, in Italian
    assert row["id"] == f"m-{match.pk}" and row["html"].startswith(f'<tr id="m-{match.pk}"')
    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE


def test_a_private_tournament_refuses_an_anonymous_socket(channel_layer):
    tournament = factories.tournament(lines=2, public=False)

    async def scenario():
        socket = WebsocketCommunicator(application, f"/ws/t/{tournament.slug}/", headers=HEADERS)
        connected, _ = await socket.connect(timeout=5)
        await socket.disconnect()
        return connected

    assert async_to_sync(scenario)() is False


def test_a_socket_from_another_site_is_refused(channel_layer):
    tournament = factories.tournament(lines=2)

    async def scenario():
        socket = WebsocketCommunicator(
            application,
            f"/ws/t/{tournament.slug}/",
            headers=[(b"origin", b"https://evil.example"), (b"host", b"127.0.0.1")],
        )
        connected, _ = await socket.connect(timeout=5)
        await socket.disconnect()
        return connected

    assert async_to_sync(scenario)() is False


def test_an_unknown_socket_path_is_refused_not_an_error(channel_layer):
    async def scenario():
        socket = WebsocketCommunicator(application, "/ws/nowhere", headers=HEADERS)
        connected, _ = await socket.connect(timeout=5)
        await socket.disconnect()
        return connected

    assert async_to_sync(scenario)() is False


# -- the desk's socket -------------------------------------------------------------------------


def _session_headers(user):
    """Handshake headers carrying ``user``'s session cookie (as their browser would)."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    return [*HEADERS, (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]


def _connects(path, headers=HEADERS):
    async def scenario():
        socket = WebsocketCommunicator(application, path, headers=headers)
        connected, _ = await socket.connect(timeout=5)
        await socket.disconnect()
        return connected

    return async_to_sync(scenario)()


def test_the_desk_socket_admits_only_who_may_view_the_desk(channel_layer):
    organizer, referee, player = (factories.user() for _ in range(3))
    tournament = factories.tournament(lines=2, organizer=organizer, referee=referee)
    path = f"/ws/desk/{tournament.slug}/"
    assert _connects(path) is False  # anonymous, although the tournament is public
    assert _connects(path, _session_headers(player)) is False  # a player, no desk role
    assert _connects(path, _session_headers(organizer)) is True
    assert _connects(path, _session_headers(referee)) is True


def test_the_desk_hears_its_own_changes_and_the_public_does_not(channel_layer):
    """A change-log entry (a result waiting for a decision, a line withdrawn…) refreshes the
    desk only; a result refreshes both."""
    from django.db import transaction

    from tournaments.services import changelog, results

    organizer = factories.user()
    tournament = factories.tournament(lines=2, organizer=organizer, public=False)
    match = factories.matches(tournament)[0]
    headers = _session_headers(organizer)

    async def scenario():
        desk = WebsocketCommunicator(application, f"/ws/desk/{tournament.slug}/", headers=headers)
        public = WebsocketCommunicator(application, f"/ws/t/{tournament.slug}/", headers=headers)
        assert (await desk.connect(timeout=5))[0] and (await public.connect(timeout=5))[0]
        try:
            await database_sync_to_async(
                lambda: changelog.record(tournament, "line.edited", match=match)
            )()
            assert await desk.receive_json_from(timeout=1) == {"type": "changed", "what": "log"}
            assert await public.receive_nothing(timeout=0.2)

            def enter():
                with transaction.atomic():
                    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)), user=organizer)

            await database_sync_to_async(enter)()
            heard = {(await desk.receive_json_from(timeout=1))["what"] for _ in range(2)}
            assert heard == {"result", "log"}
            message = await public.receive_json_from(timeout=1)
            assert message["what"] == "result" and message["v"] == 1
            # the public rows only: what the round page shows, in the page's language
            assert [row["id"] for row in message["rows"]] == [f"m-{match.pk}"]
            assert 'class="pending"' not in message["rows"][0]["html"]
        finally:
            await desk.disconnect()
            await public.disconnect()

    async_to_sync(scenario)()


def test_a_desk_socket_closes_when_its_users_role_is_revoked(channel_layer):
    """A desk socket stayed open after the user's role was taken back. Now it closes
    (4403) at the revocation; another desk user's socket stays and hears it in the log."""
    from tournaments.models import Role, TournamentRole
    from tournaments.services import roles

    organizer, referee = factories.user(), factories.user()
    tournament = factories.tournament(lines=2, organizer=organizer, referee=referee)
    role = TournamentRole.objects.get(tournament=tournament, user=referee, role=Role.REFEREE)
    path = f"/ws/desk/{tournament.slug}/"
    referee_headers, organizer_headers = _session_headers(referee), _session_headers(organizer)

    async def scenario():
        theirs = WebsocketCommunicator(application, path, headers=referee_headers)
        mine = WebsocketCommunicator(application, path, headers=organizer_headers)
        assert (await theirs.connect(timeout=5))[0] and (await mine.connect(timeout=5))[0]
        try:
            await database_sync_to_async(roles.revoke)(tournament, role.pk, by=organizer)
            closed = await theirs.receive_output(timeout=2)
            assert closed == {"type": "websocket.close", "code": 4403}
            # the organizer's desk stays open and hears the change log, nothing else
            assert await mine.receive_json_from(timeout=1) == {"type": "changed", "what": "log"}
            assert await mine.receive_nothing(timeout=0.3)
        finally:
            await mine.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db(transaction=False)
def test_the_desk_answers_htmx_with_its_live_part_alone(client):
    organizer = factories.user()
    tournament = factories.tournament(lines=2, organizer=organizer)
    client.force_login(organizer)
    page = client.get(f"/desk/{tournament.slug}/").content.decode()
    assert 'id="desk-live"' in page and f'data-live-socket="/ws/desk/{tournament.slug}/"' in page
    part = client.get(f"/desk/{tournament.slug}/", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in part and 'id="missing-h"' in part and 'id="desk-live"' not in part


def test_the_redis_layer_outwaits_its_own_blocking_pop(settings):
    """redis-py 8 reads with a 5 s timeout, channels_redis blocks 5 s waiting for a message: with
    the defaults every idle socket's consumer died after 5 s, and 2,000 sockets closing together
    ran out of pool connections (both found by bench/push.py)."""
    from channels_redis.core import RedisChannelLayer
    from channels_redis.utils import create_pool

    pool = create_pool({**settings.CHANNEL_LAYER_HOST, "address": "redis://127.0.0.1:6379/9"})
    assert pool.connection_kwargs["socket_timeout"] > RedisChannelLayer.brpop_timeout
    # and its pool (100 connections in redis-py 8) outlasts a room of sockets closing at once
    assert pool.max_connections >= 1000


@pytest.fixture
def redis_layer(channel_layer):
    """The Redis channel layer (the test is skipped without Redis)."""
    if channel_layer != "channels_redis.core.RedisChannelLayer":
        pytest.skip("needs the Redis channel layer")
    from channels.layers import get_channel_layer

    return get_channel_layer()


async def _listening(layer, tournament_id):
    """A new channel in the tournament's desk group (the public groups go through the
    broadcast, live/broadcast.py)."""
    from live.groups import desk_group_name

    channel = await layer.new_channel()
    await layer.group_add(desk_group_name(tournament_id), channel)
    return channel


def test_results_announced_from_a_worker_share_one_redis_connection(redis_layer, monkeypatch):
    """A Celery worker (synchronous code) announces each result: ``async_to_sync`` made an
    event loop, and channels_redis a Redis connection, for every one of them. They now go
    through one loop of the process's own, which keeps its connections (the layer's, for the
    desk, and the broadcast's publisher, for the public pages).

    The connections counted are the ones this process opens (redis-py's asyncio ``_connect``),
    not the server's ``total_connections_received``, which every other client of the shared
    Redis (another xdist worker, another checkout's suite) also moves."""
    from redis.asyncio.connection import Connection

    from live.groups import announce

    opened = []
    connect = Connection._connect

    async def counted(self):
        opened.append(self)
        return await connect(self)

    monkeypatch.setattr(Connection, "_connect", counted)
    layer = redis_layer
    channel = async_to_sync(_listening)(layer, 77)
    announce(77, "log")  # the process's loop and its connections, once
    announce(77, "result")
    before = len(opened)
    for _ in range(20):
        announce(77, "result")
        announce(77, "log")
    assert len(opened) - before <= 1

    async def heard():
        return [await asyncio.wait_for(layer.receive(channel), 1) for _ in range(21)]

    assert {message["what"] for message in async_to_sync(heard)()} == {"log"}


class _StuckLayer:
    """A channel layer whose sends never end (a Redis that stopped answering)."""

    extensions = ["groups"]
    cancelled = threading.Event()

    def __init__(self, **kwargs):
        pass

    async def group_send(self, group, message):
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            _StuckLayer.cancelled.set()
            raise


def test_an_announcement_that_does_not_go_through_gives_up_and_is_cancelled(
    settings, monkeypatch, caplog
):
    """The caller (a worker's task, a view's thread) waits at most SEND_TIMEOUT_S, and the
    send is cancelled then rather than left running on the process's loop."""
    from channels.layers import channel_layers

    from live import groups

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": f"{__name__}._StuckLayer"}}
    channel_layers.backends.clear()
    monkeypatch.setattr(groups, "SEND_TIMEOUT_S", 0.2)
    try:
        groups.announce(5, "result")  # never raises
        assert _StuckLayer.cancelled.wait(2)
        assert "could not announce" in caplog.text
    finally:
        channel_layers.backends.clear()


def test_an_announcement_from_a_coroutine_is_sent_by_its_own_loop(redis_layer):
    """Called where a loop runs (an async view), the send becomes a task of that loop: waiting
    for another loop there would hold the server's loop."""
    from live.groups import announce

    layer = redis_layer

    async def scenario():
        channel = await _listening(layer, 78)
        announce(78, "log")
        return await asyncio.wait_for(layer.receive(channel), 1)

    assert async_to_sync(scenario)()["what"] == "log"


# -- the broadcast: public frames encoded once, in version order -------------------------------


def test_versions_reach_a_page_in_order(channel_layer, monkeypatch):
    """Two results saved at once move the version to 1 and 2, and their messages may be sent
    2 first (each renders its rows after the bump): the page saw a gap and fetched itself. The
    push process now holds a message that skips a version until the skipped one comes (or
    HOLD_S passes: a message lost for good is sent then, and the page fetches itself once)."""
    from live import broadcast
    from live.groups import LiveEvent, announce

    monkeypatch.setattr(broadcast, "HOLD_S", 0.3)
    tournament = factories.tournament(lines=2)

    async def scenario():
        page = WebsocketCommunicator(application, f"/ws/t/{tournament.slug}/", headers=HEADERS)
        assert (await page.connect(timeout=5))[0]
        try:
            for version in (2, 1):  # the second result's message first
                await asyncio.to_thread(announce, tournament.pk, LiveEvent.RESULT, version=version)
            first = await page.receive_json_from(timeout=1)
            second = await page.receive_json_from(timeout=1)
            assert (first["v"], second["v"]) == (1, 2)
            # version 3 never comes: 4 is sent anyway once HOLD_S has passed
            await asyncio.to_thread(announce, tournament.pk, LiveEvent.RESULT, version=4)
            assert await page.receive_nothing(timeout=0.15)
            assert (await page.receive_json_from(timeout=1))["v"] == 4
        finally:
            await page.disconnect()

    async_to_sync(scenario)()


def test_a_push_process_subscribes_once_per_page_group(redis_layer):
    """Three sockets of one process on a tournament's Italian pages: one subscription to its
    group, one frame published, three sockets hearing it; the last one leaving unsubscribes."""
    import redis

    from live import broadcast
    from live.groups import LiveEvent, announce, group_name

    tournament = factories.tournament(lines=2)
    url, prefix = broadcast._config()
    channel = broadcast.redis_channel(prefix, group_name(tournament.pk, "it"))
    server = redis.Redis.from_url(url)

    def subscribers():
        return dict(server.pubsub_numsub(channel))[channel.encode()]

    async def scenario():
        pages = [
            WebsocketCommunicator(application, f"/ws/t/{tournament.slug}/", headers=HEADERS)
            for _ in range(3)
        ]
        for page in pages:
            assert (await page.connect(timeout=5))[0]
        try:
            assert await asyncio.to_thread(subscribers) == 1
            await asyncio.to_thread(announce, tournament.pk, LiveEvent.STAGE)
            for page in pages:
                assert await page.receive_json_from(timeout=1) == {
                    "type": "changed",
                    "what": "stage",
                }
        finally:
            for page in pages:
                await page.disconnect()
        assert await asyncio.to_thread(subscribers) == 0

    async_to_sync(scenario)()
    server.close()


def test_a_lost_subscription_closes_its_sockets_and_a_new_one_subscribes_again(redis_layer):
    """The push process's subscription lost (Redis restarted): its sockets close (1012), so
    their pages poll and reconnect instead of waiting on a socket that hears nothing; the
    socket that reconnects subscribes afresh and hears the next result."""
    from live import broadcast
    from live.groups import LiveEvent, announce

    tournament = factories.tournament(lines=2)
    path = f"/ws/t/{tournament.slug}/"

    async def scenario():
        page = WebsocketCommunicator(application, path, headers=HEADERS)
        assert (await page.connect(timeout=5))[0]
        hub = broadcast._hubs[asyncio.get_running_loop()]
        await hub._pubsub.connection.disconnect()  # as a restarted Redis would
        assert await page.receive_output(timeout=2) == {"type": "websocket.close", "code": 1012}
        await page.disconnect()
        again = WebsocketCommunicator(application, path, headers=HEADERS)
        assert (await again.connect(timeout=5))[0]
        try:
            await asyncio.to_thread(announce, tournament.pk, LiveEvent.STAGE)
            assert (await again.receive_json_from(timeout=1))["what"] == "stage"
        finally:
            await again.disconnect()

    async_to_sync(scenario)()
