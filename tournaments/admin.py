"""The organizer's desk in the Django admin.

Organized for the job: create a tournament from a preset, register lines (one by one or from a
CSV), create groups and generate a stage's rounds, enter a match's deals, see standings, close a
stage and seed the next. Everything goes through ``tournaments.services``; refusals become error
messages and nothing is saved; irreversible actions ask for confirmation on an intermediate page.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.db.models import IntegerField, OuterRef, Q, Subquery
from django.forms.models import BaseInlineFormSet
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from tournaments import access
from tournaments.access import Action
from tournaments.algorithms import vp as vp_algo
from tournaments.change_sentences import labelled
from tournaments.models import (
    ChangeLog,
    Entry,
    Group,
    GroupMember,
    Line,
    LineMember,
    Match,
    MatchResult,
    Outcome,
    Player,
    Role,
    Round,
    Stage,
    Tournament,
    TournamentRole,
    VPTable,
    VPTableRow,
)
from tournaments.services import (
    changelog,
    results,
    roles,
)
from tournaments.services import vp as vp_services

from . import admin_texts  # noqa: F401  (site header, gender-neutral admin messages)

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    # The mixins below extend a ModelAdmin they are mixed into: typed as one, so their super()
    # calls are checked against it; at run time they derive from object.
    _ModelAdminMixin = admin.ModelAdmin[Any]
else:
    _ModelAdminMixin = object


class LoggedAdminMixin(_ModelAdminMixin):
    """Record admin saves and deletions of tournament data in the ChangeLog too."""

    def _tournament_of(self, obj):
        return None

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        tournament = self._tournament_of(obj)
        if tournament is not None:
            changelog.record(
                tournament,
                f"admin.{obj._meta.model_name}.{'changed' if change else 'added'}",
                user=request.user,
                object_id=obj.pk,
                fields=sorted(form.changed_data),
            )

    def delete_model(self, request, obj):
        tournament = self._tournament_of(obj)
        pk = obj.pk
        super().delete_model(request, obj)
        if tournament is not None and Tournament.objects.filter(pk=tournament.pk).exists():
            changelog.record(
                tournament,
                f"admin.{obj._meta.model_name}.deleted",
                user=request.user,
                object_id=pk,
            )


class TournamentScopedAdmin(_ModelAdminMixin):
    """Rows of tournaments the user's roles cover, through ``tournaments.access``.

    The model permission (Django's ``change_match`` and the like) is still needed; on top of it,
    a row is listed only where the user may see the tournament's desk, and changed or deleted
    only where the user may do ``change_action``. Staff status alone shows nothing.
    """

    tournament_path = ""  # the lookup from this model to its tournament; "" is the tournament
    change_action = Action.EDIT_TOURNAMENT

    def _tournament_filter(self, tournaments):
        key = f"{self.tournament_path}__in" if self.tournament_path else "pk__in"
        return {key: tournaments}

    def tournament_of_object(self, obj):
        for name in self.tournament_path.split("__") if self.tournament_path else []:
            obj = getattr(obj, name)
        return obj

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        managed = access.managed_tournaments(request.user, Action.VIEW_DESK)
        return queryset.filter(**self._tournament_filter(managed.values("pk")))

    def _may(self, request, obj, action):
        return obj is None or access.can_manage(
            request.user, self.tournament_of_object(obj), action
        )

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) and self._may(
            request, obj, Action.VIEW_DESK
        )

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._may(
            request, obj, self.change_action
        )

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._may(
            request, obj, self.change_action
        )

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        """Tournament, stage, round and group choices only from tournaments the user runs."""
        if not request.user.is_superuser:
            managed = access.managed_tournaments(request.user, self.change_action).values("pk")
            model = db_field.related_model
            if model is Tournament:
                kwargs["queryset"] = Tournament.objects.filter(pk__in=managed)
            elif model is Stage:
                kwargs["queryset"] = Stage.objects.filter(tournament__in=managed)
            elif model is Round:
                kwargs["queryset"] = Round.objects.filter(stage__tournament__in=managed)
            elif model is Group:
                kwargs["queryset"] = Group.objects.filter(stage__tournament__in=managed)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class SharedPeopleAdmin(_ModelAdminMixin):
    """Players and lines belong to no one tournament: a non-superuser sees those of the
    tournaments they may see, and those not entered anywhere yet (to enter them)."""

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        visible = (
            access.visible_players(request.user)
            if queryset.model is Player
            else access.visible_lines(request.user)
        )
        unentered = (
            Player.objects.exclude(memberships__line__entries__isnull=False)
            if queryset.model is Player
            else Line.objects.filter(entries__isnull=True)
        )
        # Two subqueries joined by OR, not a UNION: SQLite refuses a UNION of ordered querysets.
        return queryset.filter(Q(pk__in=visible.values("pk")) | Q(pk__in=unentered.values("pk")))

    def _may_change(self, request, obj):
        """A player or line is changed by whoever manages the entries of every tournament it
        is entered in (anyone with the model permission while it is entered nowhere)."""
        if obj is None or request.user.is_superuser:
            return True
        entered_in = Tournament.objects.filter(
            entries__line__in=[obj] if isinstance(obj, Line) else obj.lines.all()
        ).distinct()
        return all(
            access.can_manage(request.user, tournament, Action.MANAGE_ENTRIES)
            for tournament in entered_in
        )

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._may_change(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._may_change(request, obj)


class _SubqueryCount(Subquery):
    """A correlated COUNT(*) subquery (no join fan-out in change lists)."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) _count)"
    output_field = IntegerField()


def _count(queryset):
    return _SubqueryCount(queryset.order_by().values("pk"))


# --------------------------------------------------------------------------- players and lines


@admin.register(Player)
class PlayerAdmin(SharedPeopleAdmin, admin.ModelAdmin):
    list_display = ["name", "federation_id", "club", "city", "user"]
    search_fields = ["name", "federation_id", "club", "city"]
    list_per_page = 100
    raw_id_fields = ["user"]
    show_full_result_count = False


class LineMemberInline(admin.TabularInline):
    model = LineMember
    extra = 0
    max_num = 3
    autocomplete_fields = ["player"]


@admin.register(Line)
class LineAdmin(SharedPeopleAdmin, admin.ModelAdmin):
    list_display = ["name", "players_list", "created_at"]
    search_fields = ["name", "members__player__name", "members__player__federation_id"]
    inlines = [LineMemberInline]
    list_per_page = 100
    show_full_result_count = False

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("members__player")

    @admin.display(description=gettext_lazy("players"))
    def players_list(self, obj):
        return ", ".join(member.player.name for member in obj.members.all())


# --------------------------------------------------------------------------- VP tables


class VPRowFormSet(BaseInlineFormSet):
    """Refuse a table with gaps, overlaps or a non-monotone scale (algorithms.vp rules)."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        rows = []
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE"):
                continue
            rows.append(
                vp_algo.VPRow(data["vp_winner"], data["vp_loser"], data["mp_from"], data["mp_to"])
            )
        parent = self.instance
        kind = getattr(parent, "kind", VPTable.Kind.MARGIN)
        try:
            vp_algo.VPTable(
                rows=tuple(sorted(rows, key=lambda r: r.mp_from)),
                kind=vp_algo.TableKind(kind),
                win_vp=parent.win_vp,
                draw_vp=parent.draw_vp,
                loss_vp=parent.loss_vp,
                timeout_min_vp=parent.timeout_min_vp,
            )
        except vp_algo.VPTableError as error:
            raise forms.ValidationError(
                _("The table is not consistent: %(error)s") % {"error": vp_services.describe(error)}
            ) from error


class VPTableRowInline(admin.TabularInline):
    model = VPTableRow
    formset = VPRowFormSet
    extra = 0


@admin.register(VPTable)
class VPTableAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "kind", "target_points", "deals_min", "deals_max"]
    list_filter = ["kind"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [VPTableRowInline]


# --------------------------------------------------------------------------- tournaments


class EntryInline(admin.TabularInline):
    model = Entry
    extra = 0
    autocomplete_fields = ["line"]
    fields = ["seed", "line", "withdrawn"]
    ordering = ["seed", "id"]
    show_change_link = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("line")


class TournamentRoleInline(admin.TabularInline):
    """Who holds which role in the tournament; only those who may manage roles change it."""

    model = TournamentRole
    fk_name = "tournament"
    extra = 0
    fields = ["user", "role", "granted_by", "granted_at"]
    readonly_fields = ["granted_by", "granted_at"]
    raw_id_fields = ["user"]

    def _may(self, request, obj):
        return obj is not None and access.can_manage(request.user, obj, Action.MANAGE_ROLES)

    def has_view_permission(self, request, obj=None):
        return obj is not None and access.can_manage(request.user, obj, Action.VIEW_DESK)

    def has_add_permission(self, request, obj=None):
        return self._may(request, obj)

    def has_change_permission(self, request, obj=None):
        return self._may(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._may(request, obj)


class StageInline(admin.TabularInline):
    model = Stage
    extra = 0
    fields = ["order", "name", "kind", "status", "double_round_robin", "third_place_match"]
    show_change_link = True


@admin.register(Tournament)
class TournamentAdmin(TournamentScopedAdmin, LoggedAdminMixin, admin.ModelAdmin):
    list_display = [
        "name",
        "start_date",
        "venue",
        "variant",
        "end_rule",
        "end_value",
        "status",
        "is_public",
        "entry_count",
    ]
    list_filter = ["status", "variant", "is_public", "start_date"]
    search_fields = ["name", "slug", "venue"]
    date_hierarchy = "start_date"
    prepopulated_fields = {"slug": ["name"]}
    autocomplete_fields = ["vp_table"]
    inlines = [StageInline, EntryInline, TournamentRoleInline]
    fieldsets = [
        (
            None,
            {"fields": ["name", "slug", "start_date", "end_date", "venue", "status", "is_public"]},
        ),
        (
            gettext_lazy("Rules"),
            {
                "fields": [
                    "variant",
                    "options",
                    "deck_style",
                    "seats_per_line",
                    "end_rule",
                    "end_value",
                    "time_limit_s",
                    "vp_table",
                    "tiebreaks",
                    "lots_seed",
                    "rated_when_private",
                ]
            },
        ),
    ]

    def _tournament_of(self, obj):
        return obj

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "options" and field is not None:
            field.help_text = _(
                'The game\'s rule options, as {"name": value}; an option left out takes the '
                "variant's default. The desk's “New tournament” lists every option with what "
                "it means at the table."
            )
        return field

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if not change:  # whoever creates a tournament runs it
            roles.grant(obj, request.user, Role.ORGANIZER, by=request.user)

    def save_formset(self, request, form, formset, change):
        if formset.model is TournamentRole:
            for role in formset.save(commit=False):
                role.granted_by = role.granted_by or request.user
                role.save()
            for role in formset.deleted_objects:
                role.delete()
            access.forget_roles(request.user)
        else:
            super().save_formset(request, form, formset, change)
        if formset.has_changed():
            changelog.record(
                form.instance,
                f"admin.{formset.model._meta.model_name}.changed",
                user=request.user,
                added=len(formset.new_objects),
                changed=len(formset.changed_objects),
                deleted=len(formset.deleted_objects),
            )

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(n_entries=_count(Entry.objects.filter(tournament=OuterRef("pk"))))
        )

    @admin.display(description=gettext_lazy("lines"), ordering="n_entries")
    def entry_count(self, obj):
        return obj.n_entries


@admin.register(Entry)
class EntryAdmin(TournamentScopedAdmin, LoggedAdminMixin, admin.ModelAdmin):
    tournament_path = "tournament"
    change_action = Action.MANAGE_ENTRIES
    list_display = ["line", "tournament", "seed", "withdrawn"]
    list_filter = ["withdrawn", ("tournament", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["line__name", "line__members__player__name", "tournament__name"]
    autocomplete_fields = ["tournament", "line"]
    list_select_related = ["line", "tournament"]
    list_per_page = 100
    show_full_result_count = False

    def _tournament_of(self, obj):
        return obj.tournament


# --------------------------------------------------------------------------- stages and groups


class GroupInline(admin.TabularInline):
    model = Group
    extra = 0
    fields = ["order", "name"]
    show_change_link = True


@admin.register(Stage)
class StageAdmin(TournamentScopedAdmin, LoggedAdminMixin, admin.ModelAdmin):
    tournament_path = "tournament"
    change_action = Action.RUN_STAGES
    list_display = ["name", "tournament", "order", "kind", "status", "group_count", "match_count"]
    list_filter = ["kind", "status"]
    search_fields = ["name", "tournament__name"]
    autocomplete_fields = ["tournament"]
    list_select_related = ["tournament"]
    inlines = [GroupInline]

    def _tournament_of(self, obj):
        return obj.tournament

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_groups=_count(Group.objects.filter(stage=OuterRef("pk"))),
                n_matches=_count(Match.objects.filter(round__stage=OuterRef("pk"))),
            )
        )

    @admin.display(description=pgettext_lazy("round-robin group", "groups"), ordering="n_groups")
    def group_count(self, obj):
        return obj.n_groups

    @admin.display(description=gettext_lazy("matches"), ordering="n_matches")
    def match_count(self, obj):
        return obj.n_matches


class GroupMemberInline(admin.TabularInline):
    model = GroupMember
    extra = 0
    autocomplete_fields = ["line"]


@admin.register(Group)
class GroupAdmin(TournamentScopedAdmin, LoggedAdminMixin, admin.ModelAdmin):
    tournament_path = "stage__tournament"
    change_action = Action.RUN_STAGES
    list_display = ["name", "stage", "standings_link"]
    list_filter = [("stage__tournament", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "stage__name", "stage__tournament__name"]
    list_select_related = ["stage__tournament"]
    inlines = [GroupMemberInline]

    def _tournament_of(self, obj):
        return obj.stage.tournament

    @admin.display(description=gettext_lazy("standings"))
    def standings_link(self, obj):
        """The group's standings as everyone sees them, on its public page."""
        url = reverse("public:group", args=[obj.stage.tournament.slug, obj.pk])
        return format_html('<a href="{}">{}</a>', url, _("standings"))


@admin.register(Round)
class RoundAdmin(TournamentScopedAdmin, admin.ModelAdmin):
    tournament_path = "stage__tournament"
    change_action = Action.RUN_STAGES
    list_display = ["__str__", "stage", "number", "starts_at"]
    list_filter = [("stage__tournament", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "stage__name"]
    list_select_related = ["stage__tournament"]


# --------------------------------------------------------------------------- matches


class MatchResultInline(admin.TabularInline):
    model = MatchResult
    extra = 0
    can_delete = False
    readonly_fields = ("line", "points", "mp", "vp", "won", "drawn")
    fields = readonly_fields

    def has_add_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("line")


@admin.register(Match)
class MatchAdmin(TournamentScopedAdmin, admin.ModelAdmin):
    tournament_path = "round__stage__tournament"
    change_action = Action.ENTER_RESULTS
    list_display = [
        "__str__",
        "tournament_name",
        "round",
        "group",
        "table_number",
        "status",
        "outcome",
        "winner",
        "result_link",
    ]
    list_filter = [
        "status",
        "outcome",
        "round__stage__kind",
        ("round__stage__tournament", admin.RelatedOnlyFieldListFilter),
    ]
    search_fields = ["home__name", "away__name", "round__stage__tournament__name"]
    list_select_related = ["home", "away", "winner", "group", "round__stage__tournament"]
    autocomplete_fields = ["home", "away", "winner", "offender"]
    raw_id_fields = ["next_match", "loser_next_match", "round", "group"]
    readonly_fields = ["status", "outcome", "winner", "offender", "has_tiebreak", "deals"]
    inlines = [MatchResultInline]
    list_per_page = 100
    show_full_result_count = False

    def get_readonly_fields(self, request, obj=None):
        """A result belongs to the match's lines: they stay as they are while it has one
        (delete the result first), or the standings would count a line that did not play."""
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.status == Match.Status.DONE and obj.outcome != Outcome.BYE:
            fields += ["home", "away"]
        return fields

    @admin.display(description=gettext_lazy("tournament"))
    def tournament_name(self, obj):
        return obj.round.stage.tournament.name

    @admin.display(description=gettext_lazy("deals"))
    def deals(self, obj):
        """The deals of the result in force, one line per deal: home – away points."""
        deals = results.deals_of_match(obj) if obj.pk else []
        if not deals:
            return "—"
        return format_html_join(
            mark_safe("<br>"),
            "{}. {} – {}{}",
            (
                (
                    position,
                    deal.points[0],
                    deal.points[1],
                    "".join(
                        f" ({label})"
                        for label, shown in (
                            (_("tie-break"), deal.is_tiebreak),
                            (_("penalty"), deal.is_penalty),
                        )
                        if shown
                    ),
                )
                for position, deal in enumerate(deals, start=1)
            ),
        )

    @admin.display(description=gettext_lazy("result"))
    def result_link(self, obj):
        if obj.is_bye or obj.home_id is None or obj.away_id is None:
            return "—"
        # Results are entered, corrected and deleted on the desk, the one place for them.
        url = reverse("desk:match", args=[obj.round.stage.tournament.slug, obj.pk])
        label = _("change result") if obj.status == Match.Status.DONE else _("enter result")
        return format_html('<a href="{}">{}</a>', url, label)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        changelog.record(
            obj.round.stage.tournament,
            "admin.match.changed" if change else "admin.match.added",
            match=obj,
            user=request.user,
            fields=sorted(form.changed_data),
        )


class ChangeActionFilter(admin.SimpleListFilter):
    """Filter by action, listed by their labels rather than their codes."""

    title = gettext_lazy("action")
    parameter_name = "action"

    def lookups(self, request, model_admin):
        visible = model_admin.get_queryset(request)
        actions = visible.order_by("action").values_list("action", flat=True).distinct()
        rows = labelled([ChangeLog(action=action, detail={}) for action in actions])
        return [(row.action, row.action_label) for row in rows]

    def queryset(self, request, queryset):
        return queryset.filter(action=self.value()) if self.value() else queryset


@admin.register(ChangeLog)
class ChangeLogAdmin(TournamentScopedAdmin, admin.ModelAdmin):
    tournament_path = "tournament"
    list_display = ["created_at", "tournament", "action_text", "user", "match", "detail_text"]
    list_filter = [ChangeActionFilter, ("tournament", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["action", "user__username", "tournament__name"]
    list_select_related = ["tournament", "user", "match__home", "match__away"]
    date_hierarchy = "created_at"
    list_per_page = 100
    show_full_result_count = False

    @admin.display(description=gettext_lazy("detail"))
    def detail_text(self, obj):
        return getattr(obj, "sentence", "")

    @admin.display(description=gettext_lazy("action"), ordering="action")
    def action_text(self, obj):
        return getattr(obj, "action_label", obj.action)

    def get_changelist_instance(self, request):
        """Labels and sentences with names instead of codes and ids (``winner=26``)."""
        changelist = super().get_changelist_instance(request)
        changelist.result_list = labelled(changelist.result_list)
        return changelist

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
