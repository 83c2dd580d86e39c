"""Pairings the organizer forbids: two lines of a tournament that must never meet.

Danish and Swiss rounds never pair them; a Mitchell movement seats them in the same direction
(``tournaments.services.pairing``), and so does a duplicate stage's Mitchell when it is drawn
(``tournaments.services.duplicate``, which refuses a draw that would still make them meet). A
pairing added after a round was paired holds from the next pairing on: rounds already paired
stay as they are.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.db.models.functions import Lower
from django.utils.translation import gettext as _

from tournaments.exceptions import ForbiddenPairingError
from tournaments.models import Entry, ForbiddenPairing
from tournaments.services import changelog
from tournaments.services import pairing as pairings


def forbidden_pairings(tournament) -> list[ForbiddenPairing]:
    """The tournament's forbidden pairings, with their lines, by the first line's name."""
    return sorted(
        ForbiddenPairing.objects.filter(tournament=tournament).select_related("line_a", "line_b"),
        key=lambda pairing: (pairing.line_a.name.casefold(), pairing.line_b.name.casefold()),
    )


def forbidden_pairings_queryset(tournament) -> QuerySet[ForbiddenPairing]:
    """The same list as a queryset (the API pages through it), by the lines' names."""
    return (
        ForbiddenPairing.objects.filter(tournament=tournament)
        .select_related("line_a", "line_b")
        .order_by(Lower("line_a__name"), Lower("line_b__name"), "pk")
    )


@transaction.atomic
def forbid_pairing(tournament, line_a_id, line_b_id, *, note="", user=None) -> ForbiddenPairing:
    """Forbid ``line_a_id`` and ``line_b_id`` (lines entered in ``tournament``) to meet."""
    if line_a_id == line_b_id:
        raise ForbiddenPairingError(_("Choose two different lines."))
    entered = set(
        Entry.objects.filter(tournament=tournament, line_id__in=[line_a_id, line_b_id]).values_list(
            "line_id", flat=True
        )
    )
    if entered != {line_a_id, line_b_id}:
        raise ForbiddenPairingError(_("Both lines must be registered in the tournament."))
    seated = pairings.mitchell_meeting(tournament, line_a_id, line_b_id)
    if seated is not None:
        stage, number = seated
        raise ForbiddenPairingError(
            _(
                "These two lines sit in opposite directions of the Mitchell movement of "
                "“%(stage)s”, already seated, and meet in round %(round)d: the movement cannot "
                "change under the lines playing it."
            )
            % {"stage": stage.name, "round": number}
        )
    low, high = sorted((line_a_id, line_b_id))
    if ForbiddenPairing.objects.filter(
        tournament=tournament, line_a_id=low, line_b_id=high
    ).exists():
        raise ForbiddenPairingError(_("These two lines are already kept apart."))
    try:
        with transaction.atomic():
            pairing = ForbiddenPairing.objects.create(
                tournament=tournament,
                line_a_id=low,
                line_b_id=high,
                note=" ".join(note.split())[:200],
            )
    except IntegrityError:  # the same pair, forbidden a moment ago by another request
        raise ForbiddenPairingError(_("These two lines are already kept apart.")) from None
    changelog.record(tournament, "pairing.forbidden", user=user, lines=[low, high])
    return pairing


@transaction.atomic
def allow_pairing(tournament, pairing_id, *, user=None) -> None:
    """Remove a forbidden pairing (its lines may meet again from the next pairing on)."""
    pairing = ForbiddenPairing.objects.filter(tournament=tournament, pk=pairing_id).first()
    if pairing is None:
        raise ForbiddenPairingError(_("This forbidden pairing no longer exists."))
    lines = [pairing.line_a_id, pairing.line_b_id]
    pairing.delete()
    changelog.record(tournament, "pairing.allowed", user=user, lines=lines)
