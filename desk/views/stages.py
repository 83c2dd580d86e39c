"""The day's stages on the desk: the sequence in words (which ranking each stage shows, how it
qualifies lines for the next), and adding, editing, moving and removing the stages not started.

Writing is ``tournaments.services.stages``; this view reads forms and shows refusals.
"""

import logging

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from desk.forms import DuplicateSessionForm, NewStageForm, StageForm
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_rights, desk_tournament
from tournaments.exceptions import TournamentError
from tournaments.services import duplicate
from tournaments.services import stages as stage_service

logger = logging.getLogger(__name__)


def _sequence(tournament):
    """Every stage with what the desk says of it."""
    day = sel.stage_sequence(tournament)
    for stage in day:
        stage.started = stage_service.has_started(stage)
        stage.ranking_words = stage_service.ranking_sentence(stage, day)
        stage.qualify_words = stage_service.qualification_sentence(stage, day)
        stage.swiss_warning = sel.swiss_cap_warning(stage)
    return day


def _duplicate_session(request, tournament):
    """POST of the duplicate session's form: the stage, its movement and boards in one step
    (``services.duplicate.create_session``); the form again with its errors when refused."""
    desk_tournament(request, tournament.slug, Action.RUN_STAGES)
    form = DuplicateSessionForm(request.POST, tournament=tournament)
    if form.is_valid():
        data = form.cleaned_data
        try:
            board_set = duplicate.create_session(
                tournament,
                name=data["name"],
                movement=data["movement"],
                scoring=data["scoring"],
                boards_per_round=data["boards_per_round"],
                rounds=data["rounds"],
                arrow_switch=data["arrow_switch"],
                relay=data["relay"],
                user=request.user,
            )
        except TournamentError as error:
            form.add_error(None, str(error))
        else:
            stage = board_set.stage
            messages.success(
                request,
                ngettext(
                    "“%(stage)s”: %(boards)d boards drawn, %(rounds)d round.",
                    "“%(stage)s”: %(boards)d boards drawn, %(rounds)d rounds.",
                    stage.rounds.count(),
                )
                % {
                    "stage": stage.name,
                    "boards": len(board_set.boards),
                    "rounds": stage.rounds.count(),
                },
            )
            return redirect("desk:tournament", slug=tournament.slug)
    return form


@desk_login_required
@require_http_methods(["GET", "POST"])
def stages_page(request, slug):
    """GET: the day's sequence; POST: add a stage, or a duplicate session (stage and boards)."""
    session_form = None
    if request.method == "POST" and request.POST.get("form") == "duplicate":
        tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
        answer = _duplicate_session(request, tournament)
        if not isinstance(answer, DuplicateSessionForm):
            return answer
        session_form = answer
        form = NewStageForm()
    elif request.method == "POST":
        tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
        form = NewStageForm(request.POST)
        if form.is_valid():
            fields = form.service_fields()
            try:
                stage = stage_service.add_stage(
                    tournament,
                    user=request.user,
                    position=form.cleaned_data.get("position"),
                    **fields,
                )
            except TournamentError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, _("Stage “%(stage)s” added.") % {"stage": stage.name})
                return redirect("desk:stages", slug=tournament.slug)
    else:
        tournament = desk_tournament(request, slug)
        form = NewStageForm()
    if session_form is None:
        session_form = DuplicateSessionForm(tournament=tournament)
    context = {
        "tournament": tournament,
        "stages": _sequence(tournament),
        "form": form,
        "session_form": session_form,
        "may": desk_rights(request.user, tournament),
    }
    refused = form.errors or session_form.errors
    return render(request, "desk/stages.html", context, status=400 if refused else 200)


@desk_login_required
@require_http_methods(["GET", "POST"])
def edit_stage(request, slug, stage_id):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    stage = sel.get_stage(tournament, stage_id)
    form = StageForm(request.POST or None, instance=stage)
    if request.method == "POST" and form.is_valid():
        try:
            stage_service.update_stage(stage, user=request.user, **form.service_fields())
        except TournamentError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, _("Stage “%(stage)s” saved.") % {"stage": stage.name})
            return redirect("desk:stages", slug=tournament.slug)
    stage.refresh_from_db()
    context = {
        "tournament": tournament,
        "stage": stage,
        "form": form,
        "started": stage_service.has_started(stage),
    }
    return render(request, "desk/stage_edit.html", context, status=400 if form.errors else 200)


@desk_login_required
@require_POST
def move_stage(request, slug, stage_id):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    stage = sel.get_stage(tournament, stage_id)
    step = -1 if request.POST.get("direction") == "up" else 1
    try:
        stage_service.move_stage(stage, stage.order + step, user=request.user)
    except TournamentError as error:
        messages.error(request, str(error))
    return redirect("desk:stages", slug=tournament.slug)


@desk_login_required
@require_POST
def remove_stage(request, slug, stage_id):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    stage = sel.get_stage(tournament, stage_id)
    if not request.POST.get("confirm"):
        messages.error(request, _("Tick the box to confirm that the stage goes."))
        return redirect("desk:stages", slug=tournament.slug)
    try:
        stage_service.remove_stage(stage, user=request.user)
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Stage “%(stage)s” removed.") % {"stage": stage.name})
    return redirect("desk:stages", slug=tournament.slug)
