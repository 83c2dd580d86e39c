"""The organizer's day on the desk, beyond results: the new-tournament wizard, lines (import,
add, edit, withdraw), stage reopening and qualifier drift, the round's pairings sheet and
projector view, and the podium.

Every view gets its tournament through ``access.desk_tournament`` (the one access check) and
every change goes through ``tournaments.services``; refusals become messages.
"""

import logging
from typing import Any

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from desk.forms import (
    EditLineForm,
    ForbidPairingForm,
    ImportLinesForm,
    LineForm,
    PrizeForm,
    TournamentWizardForm,
    errors_sentence,
)
from tournaments import access
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.exceptions import LineImportError, TournamentError
from tournaments.models import Category, Entry, Match, Round, Stage
from tournaments.services import entries, forbidden, lifecycle, presets, schedule

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- wizard


@desk_login_required
@require_http_methods(["GET", "POST"])
def new_tournament(request):
    """Create a tournament from a preset, with every rule as a real form field."""
    if not access.can_create_tournament(request.user):
        raise Http404("No such page")
    preset_slug = request.POST.get("preset") or request.GET.get("preset") or ""
    if request.method == "POST" and request.POST.get("action") != "preset":
        form = TournamentWizardForm(request.POST, preset=preset_slug)
        if form.is_valid():
            try:
                tournament = presets.create_tournament_from_preset(
                    form.cleaned_data["preset"],
                    user=request.user,
                    stages=form.stages(),
                    **form.tournament_fields(),
                )
            except TournamentError as error:
                form.add_error(None, str(error))
            else:
                messages.success(
                    request,
                    _("Tournament “%(name)s” created. Now enter its lines.")
                    % {"name": tournament.name},
                )
                return redirect("desk:lines", slug=tournament.slug)
    else:
        form = TournamentWizardForm(preset=preset_slug)
    return render(request, "desk/wizard.html", {"form": form})


# --------------------------------------------------------------------------- lines


def _entries(tournament):
    return list(
        Entry.objects.filter(tournament=tournament)
        .select_related("line")
        .prefetch_related("line__members__player")
        .order_by("withdrawn", "seed", "id")
    )


@desk_login_required
def lines(request, slug):
    tournament = desk_tournament(request, slug)
    return render(
        request,
        "desk/lines.html",
        {
            "tournament": tournament,
            "entries": _entries(tournament),
            "line_form": LineForm(tournament=tournament),
            "import_form": ImportLinesForm(),
            "import_errors": [],
            "category_choices": Category.choices,
            "drawn": Round.objects.filter(stage__tournament=tournament).exists(),
            **_forbidden_context(tournament),
        },
    )


def _forbidden_context(tournament):
    return {
        "forbidden_pairings": forbidden.forbidden_pairings(tournament),
        "forbid_form": ForbidPairingForm(tournament=tournament),
    }


@desk_login_required
@require_POST
def forbid_pairing(request, slug):
    """Two lines that must never meet (Danish and Swiss never pair them, Mitchell seats them in
    one direction)."""
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    form = ForbidPairingForm(request.POST, tournament=tournament)
    if form.is_valid():
        data = form.cleaned_data
        try:
            forbidden.forbid_pairing(
                tournament, data["line_a"], data["line_b"], note=data["note"], user=request.user
            )
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, _("The two lines will not be paired together."))
    else:
        messages.error(request, errors_sentence(form))
    return redirect("desk:lines", slug=tournament.slug)


@desk_login_required
@require_POST
def allow_pairing(request, slug, pairing_id):
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    try:
        forbidden.allow_pairing(tournament, pairing_id, user=request.user)
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("The two lines may be paired together again."))
    return redirect("desk:lines", slug=tournament.slug)


@desk_login_required
@require_POST
def add_line(request, slug):
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    form = LineForm(request.POST, tournament=tournament)
    if form.is_valid():
        try:
            entries.add_line(tournament, user=request.user, **form.service_kwargs())
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            messages.success(
                request, _("Line “%(name)s” added.") % {"name": form.cleaned_data["name"]}
            )
    else:
        messages.error(request, errors_sentence(form))
    return redirect("desk:lines", slug=tournament.slug)


@desk_login_required
@require_POST
def import_lines(request, slug):
    """A CSV file or a block pasted from a spreadsheet (tab-separated), all or nothing."""
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    form = ImportLinesForm(request.POST, request.FILES)
    import_errors = []
    if form.is_valid():
        try:
            added = entries.import_lines_csv(tournament, form.source(tournament), user=request.user)
        except LineImportError as error:
            import_errors = error.errors
            messages.error(request, str(error))
        else:
            messages.success(
                request,
                ngettext("%(n)d line imported.", "%(n)d lines imported.", len(added))
                % {"n": len(added)},
            )
            return redirect("desk:lines", slug=tournament.slug)
    return render(
        request,
        "desk/lines.html",
        {
            "tournament": tournament,
            "entries": _entries(tournament),
            "line_form": LineForm(tournament=tournament),
            "import_form": form,
            "import_errors": import_errors,
            "category_choices": Category.choices,
            **_forbidden_context(tournament),
        },
        status=400,
    )


def _entry(tournament, line_id):
    entry = (
        Entry.objects.filter(tournament=tournament, line_id=line_id).select_related("line").first()
    )
    if entry is None:
        raise Http404("No such line")
    return entry


@desk_login_required
@require_http_methods(["GET", "POST"])
def edit_line(request, slug, line_id):
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    entry = _entry(tournament, line_id)
    if request.method == "POST":
        form = EditLineForm(request.POST, tournament=tournament, entry=entry)
        if form.is_valid():
            try:
                entries.edit_line(
                    tournament, entry.line, user=request.user, **form.service_kwargs()
                )
            except TournamentError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, _("Line “%(name)s” saved.") % {"name": entry.line.name})
                return redirect("desk:lines", slug=tournament.slug)
    else:
        form = EditLineForm(tournament=tournament, entry=entry)
    return render(
        request,
        "desk/line_edit.html",
        {
            "tournament": tournament,
            "entry": entry,
            "form": form,
            "category_choices": Category.choices,
        },
    )


@desk_login_required
@require_http_methods(["GET", "POST"])
def withdraw_line(request, slug, line_id):
    """GET shows what a withdrawal does (the forfeits it gives); POST does it."""
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    entry = _entry(tournament, line_id)
    if request.method == "POST":
        if request.POST.get("action") == "reinstate":
            try:
                lifecycle.reinstate_line(tournament, entry.line, user=request.user)
            except TournamentError as error:
                messages.error(request, str(error))
            else:
                messages.success(
                    request, _("“%(line)s” is back in the draw.") % {"line": entry.line.name}
                )
            return redirect("desk:lines", slug=tournament.slug)
        try:
            withdrawal = lifecycle.withdraw_line(tournament, entry.line, user=request.user)
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            n = len(withdrawal.forfeits)
            messages.success(
                request,
                ngettext(
                    "“%(line)s” withdrawn: %(n)d match recorded as a forfeit.",
                    "“%(line)s” withdrawn: %(n)d matches recorded as forfeits.",
                    n,
                )
                % {"line": entry.line.name, "n": n},
            )
        return redirect("desk:lines", slug=tournament.slug)
    return render(
        request,
        "desk/withdraw.html",
        {
            "tournament": tournament,
            "entry": entry,
            "pending": list(lifecycle.pending_matches_of(tournament, entry.line)),
        },
    )


# --------------------------------------------------------------------------- stages


@desk_login_required
@require_http_methods(["GET", "POST"])
def reopen_stage(request, slug, stage_id):
    """GET shows what depends on the stage; POST reopens it."""
    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    stage = sel.get_stage(tournament, stage_id)
    if request.method == "POST":
        try:
            lifecycle.reopen_stage(stage, user=request.user)
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            messages.success(
                request,
                _(
                    "“%(stage)s” reopened: its results can be corrected. Nothing that follows "
                    "it changes unless you decide so."
                )
                % {"stage": stage.name},
            )
        return redirect("desk:tournament", slug=tournament.slug)
    return render(
        request,
        "desk/reopen.html",
        {"tournament": tournament, "stage": stage, "deps": lifecycle.stage_dependents(stage)},
    )


@desk_login_required
@require_POST
def stage_drift(request, slug, stage_id):
    """The organizer's answer to changed qualifiers: re-seed the unplayed matches, or keep."""
    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    stage = sel.get_stage(tournament, stage_id)
    try:
        if request.POST.get("action") == "reseed":
            n = lifecycle.reseed_unplayed(stage, user=request.user)
            messages.success(
                request,
                ngettext(
                    "%(n)d knock-out match now has the lines of the current standings.",
                    "%(n)d knock-out matches now have the lines of the current standings.",
                    n,
                )
                % {"n": n},
            )
        elif request.POST.get("action") == "keep":
            lifecycle.keep_bracket(stage, user=request.user)
            messages.success(request, _("The bracket stays as it was drawn."))
        else:
            messages.error(request, _("Choose whether to re-seed or to keep the bracket."))
    except TournamentError as error:
        messages.error(request, str(error))
    return redirect("desk:tournament", slug=tournament.slug)


# --------------------------------------------------------------------------- rounds


def _round_context(request, slug, round_id):
    tournament = desk_tournament(request, slug)
    round_ = sel.get_round(tournament, round_id)
    matches = sorted(
        (m for m in sel.round_matches(round_)),
        key=lambda m: (m.table_number is None, m.table_number or 0, m.pk),
    )
    return tournament, round_, matches


@desk_login_required
def round_sheet(request, slug, round_id):
    """One printable page: the round's pairings in table order, in large type."""
    from tournaments.services import pairing

    tournament, round_, matches = _round_context(request, slug, round_id)
    return render(
        request,
        "desk/sheet.html",
        {
            "tournament": tournament,
            "round": round_,
            "matches": matches,
            "late_joiners": pairing.late_joiners(round_),
        },
    )


def _standings_between_rounds(round_):
    """``[(caption, rows)]`` the projector shows once a round is complete: each group of a
    round-robin, or a duplicate stage's ranking against the field per direction (or overall)."""
    from tournaments.services.standings import stage_standings

    if round_.stage.kind == Stage.Kind.DUPLICATE:
        labels = {"ns": _("North-South"), "ew": _("East-West"), "": _("Overall")}
        field: list[tuple[Any, list]] = []
        for _group, rows in stage_standings(round_.stage):
            for row in rows:
                label = labels.get(row.direction, row.direction)
                if not field or field[-1][0] != label:
                    field.append((label, []))
                field[-1][1].append(row)
        return field
    if round_.stage.kind != Stage.Kind.ROUND_ROBIN:
        return []
    return [
        (_("Group %(name)s") % {"name": group.name}, rows)
        for group, rows in stage_standings(round_.stage)
    ]


@desk_login_required
@require_http_methods(["GET", "POST"])
def round_projector(request, slug, round_id):
    """Pairings, then results as they come, a clock counting down the time limit, and the
    standings once every match of the round has its result (htmx polls the fragment).

    POST ``start`` stores the round's start time, so every screen shows the same clock.
    """
    tournament, round_, matches = _round_context(request, slug, round_id)
    if request.method == "POST":
        desk_tournament(request, slug, Action.RUN_STAGES)  # starting the clock runs the round
        if request.POST.get("action") == "start":
            schedule.start_round(round_, user=request.user)
        return redirect("desk:projector", slug=tournament.slug, round_id=round_.pk)
    played = [m for m in matches if m.home_id and m.away_id]
    complete = bool(played) and all(m.status == Match.Status.DONE for m in played)
    context = {
        "tournament": tournament,
        "round": round_,
        "matches": matches,
        "complete": complete,
        "standings": _standings_between_rounds(round_) if complete else [],
        "time_limit_s": tournament.time_limit_s or 0,
        "started_at": round_.starts_at,
        "poll_seconds": sel.poll_seconds(),
    }
    template = (
        "desk/_projector.html" if request.headers.get("HX-Request") else "desk/projector.html"
    )
    return render(request, template, context)


# --------------------------------------------------------------------------- podium


@desk_login_required
def podium(request, slug):
    """The final ranking, overall or per category, and the prize list with its winners; whoever
    may edit the tournament also edits the prize list here."""
    tournament = desk_tournament(request, slug)
    may_edit = access.can_manage(request.user, tournament, Action.EDIT_TOURNAMENT)
    return render(
        request,
        "desk/podium.html",
        {
            "tournament": tournament,
            "podium": sel.podium(tournament, request.GET.get("category", "")),
            "prize_form": PrizeForm() if may_edit else None,
            "prize_list": list(tournament.prizes.all()) if may_edit else [],
            "category_choices": Category.choices,
            "finished": tournament.status == tournament.Status.FINISHED,
        },
    )
