"""The prize list of a tournament, as the organizer defines it on the desk.

Who gets each prize is not stored: it follows from the final standings
(``tournaments.algorithms.prizes``, called by the export), so a corrected result moves the
prizes with it.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils.translation import gettext as _

from tournaments.exceptions import PrizeError
from tournaments.models import Prize, category_label, normalize_category
from tournaments.services import changelog

logger = logging.getLogger(__name__)


@transaction.atomic
def add_prize(tournament, *, place: int, value: int, label: str, category: str = "", user=None):
    """Add one prize; refuses a second prize for the same place of the same ranking."""
    category = normalize_category(category)
    label = " ".join(label.split())[:120]
    if not label:
        raise PrizeError(_("The prize has no label."))
    # locks the tournament's prize list: two organizers adding the same place at once
    list(Prize.objects.select_for_update().filter(tournament=tournament))
    if Prize.objects.filter(tournament=tournament, category=category, place=place).exists():
        raise PrizeError(
            _("The list already has a prize for place %(place)d of “%(ranking)s”.")
            % {"place": place, "ranking": category_label(category) or _("overall")}
        )
    prize = Prize.objects.create(
        tournament=tournament, category=category, place=place, value=value, label=label
    )
    changelog.record(
        tournament,
        "prize.added",
        user=user,
        prize=prize.pk,
        label=label,
        place=place,
        value=value,
        category=category,
    )
    return prize


@transaction.atomic
def remove_prize(tournament, prize_id: int, *, user=None) -> None:
    prize = Prize.objects.select_for_update().filter(tournament=tournament, pk=prize_id).first()
    if prize is None:
        raise PrizeError(_("This prize is no longer in the list."))
    changelog.record(tournament, "prize.removed", user=user, prize=prize.pk, label=prize.label)
    prize.delete()
