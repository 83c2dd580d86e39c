"""Live pages: a result entered through the API reaches a connected WebSocket within a second
(the Redis channel layer when the environment has Redis, the in-memory one otherwise)."""

import json
import os
import uuid

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.urls import reverse
from rest_framework.test import APIClient

from config.asgi import application
from config.celery import app as celery_app
from tests.api import factories
from tournaments.models import Match

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]


def _redis_url():
    for name in ("CHANNEL_LAYER_URL", "REDIS_URL", "CELERY_BROKER_URL"):
        url = os.environ.get(name, "")
        if url.startswith(("redis://", "rediss://")):
            return url
    return ""


@pytest.fixture
def channel_layer(settings):
    url = _redis_url()
    settings.CHANNEL_LAYERS = {
        "default": (
            {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [url], "prefix": f"scopa-test-{uuid.uuid4().hex[:8]}"},
            }
            if url
            else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
        )
    }
    channel_layers.backends.clear()
    yield settings.CHANNEL_LAYERS["default"]["BACKEND"]
    channel_layers.backends.clear()


@pytest.fixture
def eager_celery():
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = saved


def test_a_result_entered_through_the_api_reaches_a_connected_socket(channel_layer, eager_celery):
    organizer = factories.user("organizer", is_staff=True)
    tournament = factories.tournament(lines=2, organizer=organizer)
    match = factories.matches(tournament)[0]
    client = APIClient()
    client.force_authenticate(organizer)
    url = reverse("match-records", kwargs={"match_id": match.pk})
    record = json.dumps(factories.record(tournament))

    async def scenario():
        socket = WebsocketCommunicator(application, f"/ws/t/{tournament.slug}/", headers=HEADERS)
        connected, _ = await socket.connect(timeout=5)
        assert connected
        try:
            response = await sync_to_async(client.post)(
                url, data=record, content_type="application/json"
            )
            assert response.status_code == 202, response.content
            # The result is in force once the POST has answered (eager verification); the
            # push must arrive within a second of that.
            message = await socket.receive_json_from(timeout=1)
        finally:
            await socket.disconnect()
        return message

    message = async_to_sync(scenario)()
    assert message == {"type": "changed", "what": "result"}
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
