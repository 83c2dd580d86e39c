"""The channel-layer groups of a tournament's live pages, and the one message sent to them.

Two groups per tournament: ``tournament.<id>`` hears what changes its public pages (a result, a
stage), ``desk.<id>`` hears what only the desk shows (a change-log entry, a record refused or in
error). A desk socket joins both; a public page's socket only the first.
"""

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

MESSAGE_TYPE = "tournament.changed"


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
    try:
        async_to_sync(layer.group_send)(group, {"type": MESSAGE_TYPE, "what": what})
    except Exception:  # the push is a convenience: polling still refreshes the pages
        logger.exception("live: could not announce %s for tournament %s", what, tournament_id)
