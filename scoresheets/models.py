"""Private links and the players' own reports of a match (docs/at-the-table.md).

A :class:`PrivateLink` lets one line act at the table without an account: on all of its
matches in a tournament (the line's card) or on one match (its side of a printed table card).
A :class:`TableReport` is one side's score sheet for a match, from first deal typed to the other
side's answer; the sheet it submits is a ``ResultVersion`` of source "players", so precedence and
the change log are the result service's (``tournaments.services.results``).
"""

import secrets
import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from scoresheets import tokens
from tournaments.models import Line, Match, ResultVersion, Tournament


def new_token() -> str:
    """A URL-safe secret of 128 bits: unguessable, short enough for a QR code."""
    return secrets.token_urlsafe(16)


class PrivateLink(models.Model):
    # The token itself is not stored: its hash finds the link, its seal serves a reprint
    # (scoresheets/tokens.py, docs/security.md). ``token`` below reads it.
    token_hash = models.CharField(_("token hash"), max_length=64, unique=True, editable=False)
    token_sealed = models.CharField(
        _("sealed token"), max_length=120, blank=True, default="", editable=False
    )
    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="private_links",
        verbose_name=_("tournament"),
    )
    line = models.ForeignKey(
        Line, on_delete=models.CASCADE, related_name="private_links", verbose_name=_("line")
    )
    match = models.ForeignKey(
        Match,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="private_links",
        verbose_name=_("match"),
        help_text=_("Empty: the link serves all of the line's matches in the tournament."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("created by"),
    )
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    last_seen_at = models.DateTimeField(
        _("last contact"),
        null=True,
        blank=True,
        help_text=_("When a phone holding this link last reached the server."),
    )
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("revoked by"),
    )

    class Meta:
        verbose_name = _("private link")
        verbose_name_plural = _("private links")
        ordering = ["tournament", "line", "match", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "line"],
                condition=Q(revoked_at__isnull=True, match__isnull=True),
                name="one_live_line_link",
            ),
            models.UniqueConstraint(
                fields=["line", "match"],
                condition=Q(revoked_at__isnull=True, match__isnull=False),
                name="one_live_match_link",
            ),
        ]

    # Not stored: the logged-in user acting through this link in the current request (the phone
    # pages set it), so what they do is recorded as theirs (``reports.acting_user``).
    acted_by = None
    # Not stored: what the phone pages put in their addresses in place of the token
    # (scoresheets/keychain.py), set by the page that resolved the link.
    path_key: str | None = None
    _token: str | None = None

    def __str__(self):
        scope = f"match {self.match_id}" if self.match_id else "all matches"
        return f"{self.line} ({scope})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self.token_hash:
            self.set_token(new_token())
        super().save(*args, **kwargs)

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None

    @property
    def token(self) -> str | None:
        """The token (for the card, the address): known when the link was just made or found by
        it, otherwise opened from its seal; ``None`` if no key of the site opens it."""
        if self._token is None and self.token_hash:
            self._token = tokens.unseal(self.token_sealed, self.token_hash)
        return self._token

    def set_token(self, token: str) -> None:
        self._token = token
        self.token_hash = tokens.token_hash(token)
        self.token_sealed = tokens.seal(token)


class TableReport(models.Model):
    """One side's score sheet for a match and the other side's answer to it."""

    class State(models.TextChoices):
        DRAFT = "draft", _("Being entered")
        AWAITING = "awaiting", _("Awaiting the other side")
        ACCEPTED = "accepted", _("Accepted by both sides")
        DISPUTED = "disputed", _("Disputed")
        EXPIRED = "expired", _("Not answered in time")
        DECIDED = "decided", _("Decided by the referee")
        # a sheet the referee must see for a reason of its own (``answer_comment``): it arrived
        # from a phone after another result, or with a wrong countersign code
        REFERRED = "referred", _("Sent to the referee")
        # "foglio" is masculine, a result version ("versione") feminine: a context of its own
        SUPERSEDED = "superseded", pgettext_lazy("table report", "Superseded")

    OPEN_STATES = (State.DRAFT, State.AWAITING)
    FOR_REFEREE = (State.DISPUTED, State.EXPIRED, State.REFERRED)

    match = models.ForeignKey(
        Match,
        on_delete=models.CASCADE,
        related_name="table_reports",
        verbose_name=_("match"),
        db_index=False,  # unique_table_report_submission (match, …) leads with it
    )
    side = models.CharField(_("side"), max_length=4, choices=Match.Slot.choices)
    link = models.ForeignKey(
        PrivateLink,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="reports",
        verbose_name=_("link"),
    )
    state = models.CharField(_("state"), max_length=12, choices=State.choices, default=State.DRAFT)
    deals = models.JSONField(_("deals typed"), default=list, blank=True)
    client_key = models.UUIDField(
        _("submission key"),
        default=uuid.uuid4,
        help_text=_(
            "Sent by the phone with each submission, so a resubmission stores nothing twice."
        ),
    )
    version = models.OneToOneField(
        ResultVersion,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="table_report",
        verbose_name=_("submitted version"),
    )
    counter_version = models.ForeignKey(
        ResultVersion,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("other side's version"),
    )
    submitted_at = models.DateTimeField(_("submitted at"), null=True, blank=True)
    answered_at = models.DateTimeField(_("answered at"), null=True, blank=True)
    answer_comment = models.TextField(_("other side's comment"), blank=True)
    signed_with_code = models.BooleanField(
        _("countersigned with the code"),
        default=False,
        help_text=_("The other side countersigned on this side's phone with its one-time code."),
    )
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("table report")
        verbose_name_plural = _("table reports")
        ordering = ["match", "-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["match", "client_key"], name="unique_table_report_submission"
            ),
        ]
        indexes = [models.Index(fields=["match", "state"])]

    def __str__(self):
        return f"{self.match_id} {self.side} ({self.get_state_display()})"


def new_countersign_code() -> str:
    """Six characters a player copies from paper without doubt (no 0/O, 1/I/L): 30^6, about
    7e8 codes against five tries (docs/at-the-table.md, one phone per table)."""
    return "".join(secrets.choice(COUNTERSIGN_ALPHABET) for _ in range(COUNTERSIGN_LENGTH))


COUNTERSIGN_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
COUNTERSIGN_LENGTH = 6
COUNTERSIGN_TRIES = 5


class CountersignCode(models.Model):
    """One side's one-time code for one match, printed on its half of the table card: whoever
    holds it countersigns the other side's sheet on the other side's phone. The server checks
    it when the sheet arrives (the phone belongs to the other side and cannot be trusted);
    spent once it signed, locked after ``COUNTERSIGN_TRIES`` wrong tries."""

    match = models.ForeignKey(
        Match,
        on_delete=models.CASCADE,
        related_name="countersign_codes",
        verbose_name=_("match"),
        db_index=False,  # one_countersign_code_a_side (match, side) leads with it
    )
    side = models.CharField(_("side"), max_length=4, choices=Match.Slot.choices)
    code = models.CharField(_("code"), max_length=12, default=new_countersign_code)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    used_at = models.DateTimeField(_("used at"), null=True, blank=True)
    failures = models.PositiveSmallIntegerField(_("wrong tries"), default=0)
    locked_at = models.DateTimeField(_("locked at"), null=True, blank=True)

    class Meta:
        verbose_name = _("countersign code")
        verbose_name_plural = _("countersign codes")
        constraints = [
            models.UniqueConstraint(fields=["match", "side"], name="one_countersign_code_a_side"),
        ]

    def __str__(self):
        return f"{self.match_id} {self.side}"
