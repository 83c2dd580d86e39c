"""Submitted records in the staff's model browser: the queue and each verdict, read only.

The list is the queue (state, version, mismatches, whether someone must choose between
disagreeing versions); a submission's page shows the verdict and the referee's sentence. Deciding
(choosing the version in force, verifying again) is the desk's match page, through the one
access policy.
"""

import json
import logging
from typing import cast

from django.contrib import admin
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from games.models import Submission, SubmissionQuerySet
from tournaments import access
from tournaments.access import Action

logger = logging.getLogger(__name__)


class MismatchFilter(admin.SimpleListFilter):
    title = _("needs attention")
    parameter_name = "attention"

    def lookups(self, request, model_admin):
        return [
            ("decision", _("Versions disagree")),
            ("mismatch", _("Declared points differ")),
            ("error", _("Errors")),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "decision":
            return queryset.awaiting_decision()
        if value == "mismatch":
            return queryset.filter(has_mismatches=True)
        if value == "error":
            return queryset.filter(state=Submission.State.ERROR)
        return queryset


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "match",
        "tournament",
        "version",
        "state",
        "standing",
        "awaiting",
        "has_mismatches",
        "first_error",
        "submitter",
        "source",
        "submitted_at",
        "attempts",
    ]
    list_filter = [
        "state",
        MismatchFilter,
        "source",
        ("match__round__stage__tournament", admin.RelatedOnlyFieldListFilter),
    ]
    list_select_related = [
        "match__round__stage__tournament",
        "match__home",
        "match__away",
        "submitter",
    ]
    search_fields = ["=id", "=match__id", "content_hash", "submitter__username"]
    date_hierarchy = "submitted_at"
    ordering = ["-submitted_at", "-id"]
    readonly_fields = [
        "match",
        "version",
        "state",
        "is_standing",
        "needs_decision",
        "has_mismatches",
        "content_hash",
        "submitter",
        "source",
        "submitted_at",
        "enqueued_at",
        "verified_at",
        "attempts",
        "error_reason",
        "verdict_summary",
        "mismatches",
        "pretty_verdict",
        "pretty_document",
    ]
    fields = tuple(readonly_fields)

    class Media:
        css = {"all": ["css/admin-record.css"]}

    def get_queryset(self, request):
        qs = cast(SubmissionQuerySet, super().get_queryset(request)).with_version_status()
        if request.user.is_superuser:
            return qs
        managed = access.managed_tournaments(request.user, Action.VIEW_DESK)
        return qs.filter(match__round__stage__tournament__in=managed.values("pk"))

    def has_add_permission(self, request):
        return False  # records arrive through the API or the import

    def has_change_permission(self, request, obj=None):
        return False if obj is not None else super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False  # nothing submitted is ever lost

    @admin.display(description=_("tournament"))
    def tournament(self, obj):
        return obj.match.round.stage.tournament

    @admin.display(description=_("standing version"), boolean=True)
    def standing(self, obj):
        return obj.is_standing

    @admin.display(description=_("needs the organizer"), boolean=True)
    def awaiting(self, obj):
        return obj.needs_decision

    @admin.display(description=_("first error"))
    def first_error(self, obj):
        if obj.state == Submission.State.ERROR:
            return obj.error_reason[:120]
        errors = obj.errors
        return errors[0].get("message", "")[:160] if errors else ""

    @admin.display(description=_("verdict"))
    def verdict_summary(self, obj):
        verdict = obj.verdict or {}
        if not verdict:
            return "—"
        return format_html(
            "{}: {} · {}: {} · {}: {}",
            _("valid"),
            verdict.get("valid"),
            _("totals"),
            verdict.get("totals"),
            _("winner (side)"),
            verdict.get("winner"),
        )

    @admin.display(description=_("declared vs verified"))
    def mismatches(self, obj):
        return (
            json.dumps(obj.declared_mismatches, ensure_ascii=False) if obj.has_mismatches else "—"
        )

    @admin.display(description=_("verdict (JSON)"))
    def pretty_verdict(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.verdict, indent=2, ensure_ascii=False))

    @admin.display(description=_("record as submitted"))
    def pretty_document(self, obj):
        text = json.dumps(obj.document, indent=1, ensure_ascii=False)
        # a class, not a style attribute: the CSP allows no inline style (css/admin-record.css)
        return format_html('<pre class="record-json">{}</pre>', text)
