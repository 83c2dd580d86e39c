"""One WebSocket per open tournament page: joins the tournament's group and passes its
"changed" messages on; the page's script then refreshes its fragment."""

import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from live.groups import group_name
from tournaments import access

logger = logging.getLogger(__name__)


def _visible_tournament_id(slug, user):
    """The tournament's id if ``user`` may see its pages (the one access policy), else None."""
    return access.visible_tournaments(user).filter(slug=slug).values_list("pk", flat=True).first()


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    group = None

    async def connect(self):
        slug = self.scope["url_route"]["kwargs"]["slug"]
        tournament_id = await database_sync_to_async(_visible_tournament_id)(
            slug, self.scope.get("user")
        )
        if tournament_id is None:
            await self.close(code=4404)
            return
        self.group = group_name(tournament_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        """The page has nothing to say; anything it sends is ignored."""

    async def tournament_changed(self, event):
        await self.send_json({"type": "changed", "what": event.get("what", "")})


class RefusingConsumer(AsyncJsonWebsocketConsumer):
    """Closes the handshake of a WebSocket path nothing listens on."""

    async def connect(self):
        await self.close(code=4404)
