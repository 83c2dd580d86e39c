"""The phone's keychain: the printed link's token traded for a cookie on first open.

A card's QR code carries the token in its address (``/p/<token>/``). The first page opened with
it sets ``scopa_links``, an HttpOnly cookie scoped to ``/p/`` and signed with the site key,
that maps the link's id to its token; from then on the pages, the sheet's calls, the outbox and
the home-screen icon use ``/p/k<id>/…``, an address that names the link without its secret (the
page also rewrites the address bar). So the token is not in later URLs, in the service worker's
cache, in a screenshot of the address bar or in a proxy's log. A phone keeps several links (a
line card and a table card) side by side.

Signed, not encrypted: the cookie holds only what the phone already had in its QR code.
"""

from __future__ import annotations

import logging
import re

from django.conf import settings
from django.core import signing

logger = logging.getLogger(__name__)

COOKIE = "scopa_links"
_SALT = "scoresheets.keychain"
MAX_AGE_S = 120 * 24 * 3600  # a season's tournaments; the card re-opens it
MAX_LINKS = 12
_KEY = re.compile(r"k(\d{1,12})")


def path_key(link_pk: int) -> str:
    """What the tokenless addresses carry in place of the token."""
    return f"k{link_pk}"


def is_path_key(value: str) -> bool:
    return _KEY.fullmatch(value) is not None


def tokens(request) -> dict[str, str]:
    """The links the phone holds: link id (as text) → token."""
    raw = request.COOKIES.get(COOKIE)
    if not raw:
        return {}
    try:
        found = signing.loads(raw, salt=_SALT, max_age=MAX_AGE_S)
    except signing.BadSignature:
        return {}
    return found if isinstance(found, dict) else {}


def token_for(request, key: str) -> str:
    """The token a tokenless address stands for on this phone, or ``""``."""
    match = _KEY.fullmatch(key)
    if match is None:
        return key
    return str(tokens(request).get(match.group(1), ""))


def remember(request, response, link_pk: int, token: str) -> None:
    """Add the link to the phone's cookie (unless it is there already)."""
    held = tokens(request)
    if held.get(str(link_pk)) == token:
        return
    held[str(link_pk)] = token
    while len(held) > MAX_LINKS:
        held.pop(next(iter(held)))
    response.set_cookie(
        COOKIE,
        signing.dumps(held, salt=_SALT, compress=True),
        max_age=MAX_AGE_S,
        path="/p/",
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
