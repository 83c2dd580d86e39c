"""Refusals at the table, each with a sentence fit for a player's phone."""

from django.utils.translation import gettext_lazy as _

from tournaments.exceptions import ResultError


class ReportError(ResultError):
    """A sheet, an answer or a decision that cannot be taken now; nothing was stored."""

    default_message = _("The sheet was refused.")
