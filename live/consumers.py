"""One WebSocket per open live page: it joins its tournament's groups (the public one in the
page's language, ``?lang=``) and passes their "changed" messages on; the page's script
(public/static/js/live.js) then swaps the rows a message carries or refreshes its fragments.

Who may listen is the one access policy's answer (``tournaments.access``): a public page's
socket needs the tournament to be visible to the user, a desk socket the right to view the desk.
Anyone else gets the handshake closed, so a private tournament's slug tells nothing.
"""

import logging
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet

from live.groups import LiveEvent, desk_group_name, group_name, page_language
from tournaments import access
from tournaments.access import Action
from tournaments.models import Tournament

# The user the authentication middleware put in the socket's scope (none without it).
ScopeUser = AbstractBaseUser | AnonymousUser | None

logger = logging.getLogger(__name__)


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    """The socket of a tournament's public pages (``/ws/t/<slug>/``)."""

    groups_joined: list[str]
    tournament_id: int | None = None

    def allowed_tournaments(self, user: ScopeUser) -> QuerySet[Tournament]:
        return access.visible_tournaments(user)

    def language(self) -> str:
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return page_language((query.get("lang") or [""])[0])

    def groups_of(self, tournament_id: int) -> list[str]:
        return [group_name(tournament_id, self.language())]

    def _tournament_id(self, slug: str, user: ScopeUser) -> int | None:
        """The tournament's id if ``user`` may listen to it, else None."""
        allowed = self.allowed_tournaments(user)
        return allowed.filter(slug=slug).values_list("pk", flat=True).first()

    async def connect(self) -> None:
        self.groups_joined = []
        slug = self.scope["url_route"]["kwargs"]["slug"]
        tournament_id = await database_sync_to_async(self._tournament_id)(
            slug, self.scope.get("user")
        )
        if tournament_id is None:
            await self.close(code=4404)
            return
        self.tournament_id = tournament_id
        for group in self.groups_of(tournament_id):
            await self.channel_layer.group_add(group, self.channel_name)
            self.groups_joined.append(group)
        await self.accept()

    def _still_allowed(self) -> bool:
        user = self.scope.get("user")
        access.forget_roles(user)  # the scope's user lives as long as the socket
        if self.tournament_id is None:
            return False
        return self.allowed_tournaments(user).filter(pk=self.tournament_id).exists()

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """The page has nothing to say; anything it sends is ignored."""

    async def tournament_changed(self, event: dict[str, Any]) -> None:
        what = event.get("what", "")
        if what == LiveEvent.ROLES:
            if not await database_sync_to_async(self._still_allowed)():
                # the user's role went: the socket goes with it (4403, as a refused handshake)
                await self.close(code=4403)
            return  # nothing to refresh: the change log's own message does that
        message: dict[str, Any] = {"type": "changed", "what": what}
        if "v" in event:
            message["v"] = event["v"]
        if "rows" in event:
            message["rows"] = event["rows"]
        await self.send_json(message)


class DeskConsumer(TournamentConsumer):
    """The socket of a tournament's desk pages (``/ws/desk/<slug>/``): the users who may view
    its desk, hearing the public changes and the desk's own."""

    def allowed_tournaments(self, user: ScopeUser) -> QuerySet[Tournament]:
        return access.managed_tournaments(user, Action.VIEW_DESK)

    def groups_of(self, tournament_id: int) -> list[str]:
        return [group_name(tournament_id, self.language()), desk_group_name(tournament_id)]


class RefusingConsumer(AsyncJsonWebsocketConsumer):
    """Closes the handshake of a WebSocket path nothing listens on."""

    async def connect(self) -> None:
        await self.close(code=4404)
