"""Announcing from a process without sockets: on the in-memory layer (the embedded default, a
worker started without ``CHANNEL_LAYER_URL``) nobody else can hear it, so nothing is rendered."""

from unittest import mock

import pytest
from asgiref.sync import async_to_sync
from channels.layers import channel_layers, get_channel_layer

from live import patches
from live.groups import LiveEvent, announce, group_name


@pytest.fixture
def in_memory(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.clear()
    yield get_channel_layer()
    channel_layers.backends.clear()


def test_in_memory_a_result_nobody_here_listens_to_renders_no_row(in_memory, monkeypatch):
    # A worker rendered each small group's rows for nobody: more CPU than the results' writes.
    renderer = mock.Mock(return_value=[{"id": "m-1", "html": "<tr></tr>"}])
    monkeypatch.setattr(patches, "_renderers", [renderer])
    announce(7, LiveEvent.RESULT, version=3, match_ids=[1])
    renderer.assert_not_called()

    # a socket of this process in the Italian page's group: the rows are rendered for it
    async_to_sync(in_memory.group_add)(group_name(7, "it"), "a-socket")
    announce(7, LiveEvent.RESULT, version=4, match_ids=[1])
    assert renderer.call_count >= 1
