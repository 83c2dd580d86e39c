"""Organizer admin for submitted records: the verification queue and its two actions.

The list is the queue (state, version, mismatches, whether the organizer must choose between
disagreeing versions); a submission's page shows the verdict and the referee's sentence. Actions:
rerun verification, and make a verified version the match's result.
"""

import json
import logging
from typing import cast

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from games import services
from games.exceptions import SubmissionError
from games.models import Submission, SubmissionQuerySet
from tournaments import access
from tournaments.access import Action
from tournaments.admin import confirm_page
from tournaments.exceptions import TournamentError
from tournaments.services import results

logger = logging.getLogger(__name__)


def _decides(user, submission):
    """Rerunning a record and choosing the standing version decide a disputed result."""
    return access.can_manage(user, submission.match.round.stage.tournament, Action.DECIDE)


class _BasedOnForm(forms.Form):
    """The version in force the organizer saw on the confirmation page ("": none)."""

    based_on = forms.CharField(required=False, widget=forms.HiddenInput)


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
    actions = ["rerun", "make_standing"]
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

    @admin.action(description=_("Verify again"))
    def rerun(self, request, queryset):
        done = 0
        for submission in queryset.select_related("match__round__stage__tournament"):
            if not _decides(request.user, submission):
                continue
            services.rerun_verification(submission)
            done += 1
        self.message_user(
            request,
            ngettext(
                "%(n)d submission sent back to verification.",
                "%(n)d submissions sent back to verification.",
                done,
            )
            % {"n": done},
        )

    @admin.action(description=_("Make this version the match's result"))
    def make_standing(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, _("Choose exactly one version."), messages.ERROR)
            return
        submission = queryset.select_related("match__round__stage__tournament").get()
        if not _decides(request.user, submission):
            self.message_user(
                request,
                _("Only the tournament's organizers and referees may do this."),
                messages.ERROR,
            )
            return
        if "apply" not in request.POST:
            # the organizer decides against the version in force shown here, and names it
            current = results.in_force(submission.match)
            shown = current.number if current else ""
            return confirm_page(
                self,
                request,
                queryset,
                action="make_standing",
                title=_("Make this version the match's result"),
                message=_("The result in force now: %(current)s. Replace it with this version?")
                % {"current": _("version %(n)d") % {"n": shown} if shown else _("none")},
                form=_BasedOnForm(initial={"based_on": shown}),
            )
        based_on = request.POST.get("based_on")  # None: no version named, a refusal (428)
        try:
            services.choose_standing(submission, user=request.user, based_on=based_on)
        except (SubmissionError, TournamentError) as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(
            request,
            _("Version %(version)d is now the result of %(match)s.")
            % {"version": submission.version, "match": submission.match},
        )
