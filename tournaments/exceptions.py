"""Errors an organizer (or a record) can cause, each with a translated message.

Views and the admin catch :class:`TournamentError` and show ``str(error)``; nothing a user sends
should surface as a 500.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

    from tournaments.models import ResultVersion


class TournamentError(Exception):
    """Base class: a refused operation with a message fit for the organizer."""

    default_message = _("The operation was refused.")

    def __init__(self, message: StrOrPromise | None = None, **detail: Any) -> None:
        self.message = message if message is not None else self.default_message
        self.detail = detail
        super().__init__(str(self.message))

    def __str__(self):
        return str(self.message)


class ResultError(TournamentError):
    """A match result that does not add up, or that cannot be stored now; nothing was saved."""

    default_message = _("The result was refused.")


class ScheduleError(TournamentError):
    """Rounds, groups or a bracket that cannot be generated as asked."""

    default_message = _("The schedule cannot be generated.")


class PresetError(TournamentError):
    """An unknown or malformed tournament preset."""

    default_message = _("Unknown tournament preset.")


class LineImportError(TournamentError):
    """A CSV of lines with errors; ``errors`` lists ``(row_number, message)``; nothing was saved."""

    default_message = _("The file was not imported.")

    def __init__(self, errors, message=None):
        self.errors = list(errors)
        super().__init__(message)


class PrizeError(TournamentError):
    """A prize the prize list cannot take; nothing was changed."""

    default_message = _("The prize list was not changed.")


class PenaltyError(TournamentError):
    """A penalty or a row of the penalty table refused; nothing was changed."""

    default_message = _("The penalty was not given.")


class ForbiddenPairingError(TournamentError):
    """A pairing the organizer forbids that cannot be added or removed as asked."""

    default_message = _("The forbidden pairings were not changed.")


class RoleError(TournamentError):
    """A role that cannot be granted or revoked as asked; nothing was changed."""

    default_message = _("The role was not changed.")


class StageError(ScheduleError):
    """A stage that cannot be added, changed, moved or removed as asked (it has started, or its
    settings do not hold); nothing was changed."""

    default_message = _("The stage was not changed.")


class InvitationError(RoleError):
    """An invitation link that is unknown, used, withdrawn or expired, or an account that cannot
    be made from it; nothing was changed."""

    default_message = _("This invitation link is no longer valid.")


class PairingError(ScheduleError):
    """A Danish, Swiss or Mitchell round that cannot be paired (or re-paired) now."""

    default_message = _("The next round cannot be paired.")


class ClubsApartError(PairingError):
    """A Mitchell movement that cannot seat every club's lines (or every forbidden pairing) in
    one direction; ``meetings`` counts the pairs that would meet in the fewest-meetings seating
    the organizer may accept. Nothing was paired."""

    default_message = _("The clubs cannot all be kept apart in this movement.")


class StaleResult(ResultError):
    """A save based on a version of the result that is no longer the one in force.

    ``current`` is the version in force now (``None`` when the match has none), so the caller
    can show what changed; nothing was saved.
    """

    default_message = _(
        "Someone else changed this result while you were editing it: nothing was saved. "
        "Check the result in force now and save again if yours is still right."
    )

    def __init__(self, current: ResultVersion | None, message: StrOrPromise | None = None) -> None:
        self.current = current
        super().__init__(message)


class RefusalWithStatus(Exception):
    """A refusal that knows its own HTTP status and error body (``status``, ``as_dict()``).

    Apps above this one (the records' ``SubmissionError``) subclass it, so the API's one error
    handler (``tournaments.api.errors``) answers for them without importing them.
    """

    status = 400

    def as_dict(self) -> dict:
        return {"code": "refused", "message": str(self), "field": None}


class RoundNotStarted(RefusalWithStatus):
    """A duplicate table's boards are handed out only once its round has started (API: 409)."""

    status = 409

    def __str__(self) -> str:
        return str(_("The round has not started yet: its boards are handed out when it starts."))

    def as_dict(self) -> dict:
        return {"code": "round_not_started", "message": str(self), "field": None}


class StageStarted(StageError, RefusalWithStatus):
    """A change to a stage that has started (it has rounds): its kind and place are history
    (API: 409 Conflict); nothing was changed."""

    status = 409
    default_message = _("The stage has started: it can no longer be changed.")

    def as_dict(self) -> dict:
        return {"code": "stage_started", "message": str(self), "field": None}


class VersionRequired(ResultError):
    """An organizer's change of the result in force that does not name the version of the result
    it was based on (API: 428 Precondition Required); nothing was saved."""

    default_message = _(
        "This change does not say which version of the result it was based on: nothing was "
        "saved. Reload the result and decide again."
    )


class BoardRulingError(TournamentError):
    """A director's ruling on a duplicate board that cannot be recorded as asked."""

    default_message = _("The ruling on the board was refused.")
