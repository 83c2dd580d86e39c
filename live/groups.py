"""The channel-layer group of a tournament's pages, and the one message sent to it."""

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

MESSAGE_TYPE = "tournament.changed"


def group_name(tournament_id: int) -> str:
    return f"tournament.{tournament_id}"


def announce(tournament_id: int, what: str) -> None:
    """Tell every connected page of the tournament to refresh; never raises."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            group_name(tournament_id), {"type": MESSAGE_TYPE, "what": what}
        )
    except Exception:  # the push is a convenience: polling still refreshes the pages
        logger.exception("live: could not announce %s for tournament %s", what, tournament_id)
