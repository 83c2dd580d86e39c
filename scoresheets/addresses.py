"""Where the desk sends people: the phone page of a link and the referee's page of a match.

The phone pages and the referee's decision page are built beside the desk pages of this app;
their URL names are named here and nowhere else, so the desk, the printed cards and the room
view follow them from this one place.
"""

import logging

from django.conf import settings
from django.urls import reverse

logger = logging.getLogger(__name__)

LINE_URL_NAME = "table:line"
"""The phone page of a line's link, ``/p/<token>/``: its matches."""

SHEET_URL_NAME = "table:sheet"
"""The phone score sheet of one match, ``/p/<token>/m/<match_id>/``."""

REFEREE_URL_NAME = "referee:disputes"
"""The referee's page: every disputed or unanswered sheet, both sides' versions, the decision."""


def phone_path(link) -> str:
    """The path of ``link``'s phone page: the match's sheet for a table card's link."""
    if link.match_id is not None:
        return reverse(SHEET_URL_NAME, kwargs={"token": link.token, "match_id": link.match_id})
    return reverse(LINE_URL_NAME, kwargs={"token": link.token})


def phone_url(request, link) -> str:
    """The full address printed on a card and shown to copy into a message.

    ``PUBLIC_BASE_URL`` (for example ``https://scopa.example.org``) wins over the address the
    desk was opened at, so cards printed from a laptop on the venue's network still carry the
    address phones reach.
    """
    base = settings.PUBLIC_BASE_URL
    path = phone_path(link)
    if base:
        return base.rstrip("/") + path
    return request.build_absolute_uri(path)


def referee_url(tournament, match_id: int) -> str:
    """Where the referee sees both versions of a match's sheet and decides."""
    return reverse(REFEREE_URL_NAME, kwargs={"slug": tournament.slug}) + f"#m{match_id}"
