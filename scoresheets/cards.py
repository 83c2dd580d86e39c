"""What the desk shows and prints of live private links: address and QR code per card."""

import logging
from dataclasses import dataclass

from django.utils.safestring import SafeString

from scoresheets.addresses import phone_url
from scoresheets.models import PrivateLink
from scoresheets.qr import qr_svg
from scoresheets.services import offline

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LinkCard:
    """What a page shows of one live link: the link, its full address and its QR code."""

    link: object
    url: str
    svg: SafeString


def card(request, link) -> LinkCard | None:
    """The card of ``link`` (``None`` when there is no live link to show, or when no key of
    the site opens its sealed token any more: the desk re-issues it)."""
    if link is None or not link.is_live:
        return None
    if link.token is None:
        logger.warning("private link %s: its sealed token no longer opens", link.pk)
        return None
    url = phone_url(request, link)
    return LinkCard(link=link, url=url, svg=qr_svg(url))


def attach_table_card_links(request, tournament, matches) -> bool:
    """Give each match of a round's table cards ``home_card`` and ``away_card`` (a
    ``LinkCard`` or ``None``); whether any side still lacks a live link."""
    live = {
        (link.match_id, link.line_id): link
        for link in PrivateLink.objects.filter(
            tournament=tournament, revoked_at__isnull=True, match__in=[m.pk for m in matches]
        )
    }
    missing = False
    # each side's one-time countersign code, printed beside its QR code (one phone per table)
    codes = offline.codes_for(list(matches))
    for match in matches:
        match.home_card = card(request, live.get((match.pk, match.home_id)))
        match.away_card = card(request, live.get((match.pk, match.away_id)))
        match.home_code = codes[(match.pk, "home")]
        match.away_code = codes[(match.pk, "away")]
        missing = missing or match.home_card is None or match.away_card is None
    return missing
