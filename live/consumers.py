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

from live import broadcast
from live.groups import LiveEvent, desk_group_name, frame_of, group_name, page_language
from live.versions import current_version
from tournaments import access
from tournaments.access import Action
from tournaments.models import Tournament

# The user the authentication middleware put in the socket's scope (none without it).
ScopeUser = AbstractBaseUser | AnonymousUser | None

logger = logging.getLogger(__name__)


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    """The socket of a tournament's public pages (``/ws/t/<slug>/``)."""

    groups_joined: list[str]
    broadcasts_joined: list[str]
    tournament_id: int | None = None
    _accepted = False
    _early: list[Any]  # ASGI send events

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
        self.groups_joined, self.broadcasts_joined, self._early = [], [], []
        slug = self.scope["url_route"]["kwargs"]["slug"]
        tournament_id = await database_sync_to_async(self._tournament_id)(
            slug, self.scope.get("user")
        )
        if tournament_id is None:
            await self.close(code=4404)
            return
        self.tournament_id = tournament_id
        public = group_name(tournament_id, self.language())
        for group in self.groups_of(tournament_id):
            if group == public and broadcast.enabled():
                # the public group's frames come encoded once, in version order (broadcast.py);
                # subscribed before the handshake ends, so the page misses nothing after it
                try:
                    await broadcast.hub().join(group, self, self._version_now)
                except Exception:  # Redis unreachable: the page polls and tries again later
                    logger.exception("live: could not subscribe to %s", group)
                    await self.close(code=broadcast.CLOSE_CODE)
                    return
                self.broadcasts_joined.append(group)
            else:
                await self.channel_layer.group_add(group, self.channel_name)
                self.groups_joined.append(group)
        await self.accept()
        self._accepted = True
        for message in self._early:
            await self.base_send(message)
        self._early.clear()

    async def hear(self, message: Any) -> None:
        """A frame from the broadcast: kept until the handshake is accepted, then sent."""
        if self._accepted:
            await self.base_send(message)
        else:
            self._early.append(message)

    async def _version_now(self) -> int | None:
        if self.tournament_id is None:
            return None
        return await database_sync_to_async(current_version)(self.tournament_id)

    def _still_allowed(self) -> bool:
        user = self.scope.get("user")
        access.forget_roles(user)  # the scope's user lives as long as the socket
        if self.tournament_id is None:
            return False
        return self.allowed_tournaments(user).filter(pk=self.tournament_id).exists()

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)
        for group in getattr(self, "broadcasts_joined", []):
            await broadcast.hub().leave(group, self)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """The page has nothing to say; anything it sends is ignored."""

    async def tournament_changed(self, event: dict[str, Any]) -> None:
        what = event.get("what", "")
        if what == LiveEvent.ROLES:
            if not await database_sync_to_async(self._still_allowed)():
                # the user's role went: the socket goes with it (4403, as a refused handshake)
                await self.close(code=4403)
            return  # nothing to refresh: the change log's own message does that
        await self.send_json(frame_of(event))


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
