"""Webhook endpoints that federation sites and platforms register, and the log of deliveries.

An endpoint belongs to one tournament, or (``tournament`` empty, made by a superuser) listens to
every public tournament. A delivery is one event for one endpoint: its UUID is the delivery id
the receiver sees, and it stays the same however many times the body is sent.
"""

import secrets
import uuid

from django.conf import settings
from django.db import models
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from tournaments.models import Tournament


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class Event(models.TextChoices):
    RESULT_IN_FORCE = "result.in_force", _("Result in force")
    RESULT_WITHDRAWN = "result.withdrawn", _("Result withdrawn")
    STAGE_CLOSED = "stage.closed", _("Stage closed")
    TOURNAMENT_FINISHED = "tournament.finished", _("Tournament finished")


class Endpoint(models.Model):
    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="webhook_endpoints",
        null=True,
        blank=True,
        verbose_name=_("tournament"),
        help_text=_("Empty: every public tournament (superusers only)."),
    )
    url = models.URLField(_("URL"), max_length=500)
    secret = models.CharField(_("secret"), max_length=100, default=new_secret)
    description = models.CharField(_("description"), max_length=200, blank=True)
    is_active = models.BooleanField(_("active"), default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("webhook endpoint")
        verbose_name_plural = _("webhook endpoints")
        ordering = ["tournament_id", "id"]

    def __str__(self):
        return self.url


class Delivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RETRYING = "retrying", _("Retrying")
        DELIVERED = "delivered", _("Delivered")
        FAILED = "failed", _("Failed")
        # a result on a duplicate board still secret: sent once every table holding it played
        HELD = "held", _("Held until its boards open")

    id = models.UUIDField(_("delivery id"), primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.CASCADE, related_name="deliveries", verbose_name=_("endpoint")
    )
    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="webhook_deliveries",
        verbose_name=_("tournament"),
        db_index=False,  # the (tournament, …) index leads with it
    )
    event = models.CharField(_("event"), max_length=30, choices=Event.choices)
    # The exact bytes sent (UTF-8 JSON), so a re-sent delivery carries the same body.
    body = models.TextField(_("body"))
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.PENDING
    )
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    last_status_code = models.PositiveSmallIntegerField(_("last HTTP status"), null=True)
    last_error = models.CharField(_("last error"), max_length=500, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    # When the delivery was last handed to the broker (stamped just before, as the claim of
    # whoever sends it), empty while it never was (recorded with its change, the process or the
    # broker failed before the message went out): the sweep (webhooks.tasks.sweep_stuck) queues
    # it if no attempt followed, so none stays pending.
    queued_at = models.DateTimeField(_("queued at"), null=True, blank=True)
    last_attempt_at = models.DateTimeField(_("last attempt"), null=True)
    delivered_at = models.DateTimeField(_("delivered at"), null=True)

    class Meta:
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["tournament", "-created_at"]),
            # The sweep's two scans (webhooks.services.stuck_deliveries): partial, so they hold
            # only the unfinished rows, a few among every delivery ever sent; each on the
            # column (or expression) that scan filters and orders by.
            models.Index(
                Coalesce("queued_at", "created_at"),
                name="delivery_pending_idx",
                condition=models.Q(status="pending"),
            ),
            models.Index(
                fields=["last_attempt_at"],
                name="delivery_retrying_idx",
                condition=models.Q(status="retrying"),
            ),
        ]

    def __str__(self):
        return f"{self.event} → {self.endpoint_id} ({self.id})"
