"""Where the desk sends people: the phone page of a link and the referee's page of a match.

The phone pages and the referee's decision page are built beside the desk pages of this app;
their URL names are named here and nowhere else, so the desk, the printed cards and the room
view follow them from this one place.
"""

import logging

from django.conf import settings
from django.urls import NoReverseMatch, reverse

logger = logging.getLogger(__name__)

PHONE_URL_NAME = "scoresheets:line"
"""The phone score sheet of a private link, ``/p/<token>/``."""

REFEREE_URL_NAME = "scoresheets:referee"
"""The referee's page of one match: both sides' sheets and the decision."""


def phone_path(link) -> str:
    """The path of ``link``'s phone page."""
    try:
        return reverse(PHONE_URL_NAME, kwargs={"token": link.token})
    except NoReverseMatch:  # until the phone pages are installed: their documented address
        return f"/p/{link.token}/"


def phone_url(request, link) -> str:
    """The full address printed on a card and shown to copy into a message.

    ``PUBLIC_BASE_URL`` (for example ``https://scopa.example.org``) wins over the address the
    desk was opened at, so cards printed from a laptop on the venue's network still carry the
    address phones reach.
    """
    base = getattr(settings, "PUBLIC_BASE_URL", "") or ""
    path = phone_path(link)
    if base:
        return base.rstrip("/") + path
    return request.build_absolute_uri(path)


def referee_url(tournament, match_id: int) -> str:
    """The page where the referee sees both versions of a match and decides."""
    try:
        return reverse(REFEREE_URL_NAME, kwargs={"slug": tournament.slug, "match_id": match_id})
    except NoReverseMatch:  # until the referee's page is installed: the desk's result page
        return reverse("desk:match", kwargs={"slug": tournament.slug, "match_id": match_id})
