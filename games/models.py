"""Submitted match records and their verification state.

A :class:`Submission` is a ``scopa-match/1`` document exactly as a platform, referee or import
sent it. It is stored before anything else happens so nothing submitted is ever lost; a Celery
worker (``games.tasks``) replays it with the engine and writes the verdict.
"""

import hashlib
import json
import logging
from typing import TypedDict

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.translation import gettext_lazy as _

from tournaments.models import ResultVersion

logger = logging.getLogger(__name__)


def canonical_json(document) -> str:
    """The one text form a document hashes from: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(document) -> str:
    """sha256 of the canonical JSON: two submissions of the same record hash alike."""
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


class RecordEncoder(json.JSONEncoder):
    """Writes a record's text with its characters as they are (``Nicolò``, not ``Nicol\\u00f2``):
    the text the per-match size cap counts (``services._check_storable_text``)."""

    def __init__(self, **kwargs):
        super().__init__(**{**kwargs, "ensure_ascii": False})


class RecordField(models.JSONField):
    """A JSON document kept as PostgreSQL ``json``, the text as written, rather than ``jsonb``.

    Verification reads every record back as text for the engine (``services.record_text``):
    from ``jsonb`` PostgreSQL rebuilds that text on each read, about 0.06 ms of its CPU for an
    8 KiB record (two fifths of what the engine takes to verify it); from ``json`` it hands back
    what it stored. Nothing looks inside a stored record in SQL (no key lookup, no containment),
    which is what ``jsonb`` is for. Elsewhere the column is a JSONField's own.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("encoder", RecordEncoder)
        super().__init__(*args, **kwargs)

    def db_type(self, connection):
        if connection.vendor == "postgresql":
            return "json"
        return super().db_type(connection)

    def get_db_prep_value(self, value, connection, prepared=False):
        value = super().get_db_prep_value(value, connection, prepared)
        if connection.vendor == "postgresql":
            from psycopg.types.json import Json, Jsonb

            if isinstance(value, Jsonb):  # sent as ``json``: not parsed into ``jsonb`` first
                return Json(value.obj, dumps=value.dumps)
        return value

    def from_db_value(self, value, expression, connection):
        if value is not None and not isinstance(value, str):
            return value  # psycopg reads ``json`` into Python objects itself
        return super().from_db_value(value, expression, connection)


class LatestVersion(TypedDict):
    """The result version a record became: its number and status."""

    number: int
    status: str


class SubmissionQuerySet(models.QuerySet):
    """Whether a record stands or waits is read from its result version, never stored twice."""

    def standing(self):
        """Records whose result version is the one in force."""
        return self.filter(result_versions__status=ResultVersion.Status.IN_FORCE)

    def awaiting_decision(self):
        """Records whose result waits for the organizer's decision."""
        return self.filter(result_versions__status="awaiting")

    def with_version_status(self):
        """Annotate the number and status of the record's latest result version (if any), so a
        list of submissions asks no query per row for them."""
        from tournaments.models import ResultVersion

        latest = ResultVersion.objects.filter(submission=models.OuterRef("pk")).order_by("-number")
        return self.annotate(
            version_number=models.Subquery(latest.values("number")[:1]),
            version_status=models.Subquery(latest.values("status")[:1]),
        )


class Submission(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", _("Pending")
        VERIFIED = "verified", _("Verified")
        REJECTED = "rejected", _("Rejected")
        ERROR = "error", _("Error")

    class Source(models.TextChoices):
        API = "api", _("API")
        IMPORT = "import", _("Bulk import")
        ADMIN = "admin", _("Admin")
        DEMO = "demo", _("Demo data")

    FINAL_STATES = (State.VERIFIED, State.REJECTED, State.ERROR)

    match = models.ForeignKey(
        "tournaments.Match",
        on_delete=models.PROTECT,
        related_name="submissions",
        verbose_name=_("match"),
        db_index=False,  # unique_submission_content (match, content_hash) leads with it
    )
    version = models.PositiveIntegerField(_("version"), help_text=_("1, 2, … per match."))
    document = RecordField(_("record"), help_text=_("The record exactly as submitted."))
    content_hash = models.CharField(
        _("content hash"), max_length=64, help_text=_("sha256 of the canonical JSON.")
    )
    submitter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="record_submissions",
        verbose_name=_("submitted by"),
    )
    source = models.CharField(
        _("source"), max_length=10, choices=Source.choices, default=Source.API
    )
    submitted_at = models.DateTimeField(_("submitted at"), default=timezone.now, db_index=True)
    state = models.CharField(
        _("state"), max_length=10, choices=State.choices, default=State.PENDING
    )
    verdict = models.JSONField(_("verdict"), null=True, blank=True)
    error_reason = models.TextField(_("error reason"), blank=True)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    enqueued_at = models.DateTimeField(
        _("last enqueued at"),
        null=True,
        blank=True,
        help_text=_(
            "Empty when no message of its own went out (one already out covers it, or the "
            "broker refused it); the sweep sends what stays pending."
        ),
    )
    verified_at = models.DateTimeField(_("verified at"), null=True, blank=True)
    has_mismatches = models.BooleanField(
        _("declared points differ"),
        default=False,
        help_text=_("Some declared deal points differ from the verified ones."),
    )

    objects = SubmissionQuerySet.as_manager()

    class Meta:
        verbose_name = _("record submission")
        verbose_name_plural = _("record submissions")
        ordering = ["-submitted_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["match", "version"], name="unique_submission_version"),
            models.UniqueConstraint(
                fields=["match", "content_hash"], name="unique_submission_content"
            ),
        ]
        indexes = [models.Index(fields=["state", "enqueued_at"], name="submission_sweep_idx")]

    def __str__(self):
        return f"{self.match_id} v{self.version} ({self.get_state_display()})"

    @cached_property
    def latest_result_version(self) -> "LatestVersion | None":
        """``{"number", "status"}`` of the latest result version this record became, or
        ``None``; read from ``with_version_status()``'s annotation when the row has it."""
        if "version_status" in self.__dict__:
            status = self.__dict__["version_status"]
            number = self.__dict__["version_number"]
            return None if status is None else {"number": number, "status": status}
        if self.pk is None:
            return None
        return self.result_versions.order_by("-number").values("number", "status").first()

    def refresh_from_db(self, *args, **kwargs):
        """Read again, the result version too (a decision or a rerun may have changed it)."""
        for name in ("latest_result_version", "version_status", "version_number"):
            self.__dict__.pop(name, None)
        super().refresh_from_db(*args, **kwargs)

    @property
    def result_version_status(self):
        """The status of the result version this record became, or ``None``."""
        latest = self.latest_result_version
        return latest["status"] if latest else None

    @property
    def is_standing(self):
        """The match's result in force is this record's version."""
        return self.result_version_status == ResultVersion.Status.IN_FORCE

    @property
    def needs_decision(self):
        """This record's result waits for the organizer to accept or reject it."""
        return self.result_version_status == "awaiting"

    @property
    def is_final(self):
        return self.state in self.FINAL_STATES

    @property
    def declared_mismatches(self):
        return (self.verdict or {}).get("declared_mismatches") or []

    @property
    def errors(self):
        return (self.verdict or {}).get("errors") or []


class VerificationWake(models.Model):
    """Whether a message asking the workers to verify the records waiting is out (one row).

    A record submitted alone sends that message only when none is out already
    (``services.wake_workers``); the worker that takes it clears ``requested_at`` before it
    claims anything, then verifies the waiting records batch after batch until none is left
    (``services.verify_all_waiting``). A record stored before the mark was cleared is seen by
    that worker; one stored after it sends a message of its own. A mark older than
    ``services.WAKE_STALE_S`` counts as lost with its message, and the beat sweep sends what
    stays pending (``games.tasks.sweep_pending``)."""

    requested_at = models.DateTimeField(_("requested at"), null=True, blank=True)

    class Meta:
        verbose_name = _("verification wake-up")
        verbose_name_plural = _("verification wake-ups")

    def __str__(self):
        return f"wake requested at {self.requested_at}" if self.requested_at else "no wake out"
