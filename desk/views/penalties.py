"""Penalties on the desk: the tournament's penalty table (kept by whoever edits the tournament)
and the referee's penalties in a match (``Action.DECIDE``). Every change goes through
``tournaments.services.penalties``; refusals become messages."""

import logging

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from desk.forms import PenaltyForm, PenaltyRuleForm, errors_sentence
from tournaments import access
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.exceptions import TournamentError
from tournaments.services import penalties

logger = logging.getLogger(__name__)


@desk_login_required
@require_http_methods(["GET", "POST"])
def penalty_table(request, slug):
    """The table, for everyone on the desk; adding a row needs ``EDIT_TOURNAMENT``."""
    if request.method == "POST":
        tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
        form = PenaltyRuleForm(request.POST)
        if form.is_valid():
            try:
                rule = penalties.add_rule(
                    tournament,
                    label=form.cleaned_data["label"],
                    kind=form.cleaned_data["kind"],
                    vp=form.cleaned_data.get("vp") or 0,
                    user=request.user,
                )
            except TournamentError as error:
                messages.error(request, str(error))
            else:
                messages.success(request, _("“%(label)s” added.") % {"label": rule.label})
                return redirect("desk:penalties", slug=tournament.slug)
    else:
        tournament = desk_tournament(request, slug)
        form = PenaltyRuleForm()
    may_edit = access.can_manage(request.user, tournament, Action.EDIT_TOURNAMENT)
    return render(
        request,
        "desk/penalties.html",
        {
            "tournament": tournament,
            "rules": list(tournament.penalty_rules.all()),
            "given": sel.tournament_penalties(tournament),
            "form": form if may_edit else None,
        },
    )


@desk_login_required
@require_POST
def remove_rule(request, slug, rule_id):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    try:
        penalties.remove_rule(tournament, rule_id, user=request.user)
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Removed from the penalty table."))
    return redirect("desk:penalties", slug=tournament.slug)


@desk_login_required
@require_POST
def give_penalty(request, slug, match_id):
    tournament = desk_tournament(request, slug, Action.DECIDE)
    match = sel.desk_match(tournament, match_id)
    form = PenaltyForm(request.POST, match=match, rules=tournament.penalty_rules.all())
    if form.is_valid():
        try:
            penalty = penalties.apply_penalty(
                match,
                form.cleaned_data["line"],
                form.cleaned_data["rule"],
                reason=form.cleaned_data["reason"],
                user=request.user,
            )
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            messages.success(
                request,
                _("Penalty “%(label)s” given to %(line)s.")
                % {"label": penalty.label, "line": penalty.line.name},
            )
    else:
        messages.error(request, errors_sentence(form))
    return redirect("desk:match", slug=tournament.slug, match_id=match.pk)


@desk_login_required
@require_POST
def withdraw_penalty(request, slug, match_id, penalty_id):
    tournament = desk_tournament(request, slug, Action.DECIDE)
    match = sel.desk_match(tournament, match_id)
    try:
        penalties.withdraw_penalty(match, penalty_id, user=request.user)
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Penalty taken back."))
    return redirect("desk:match", slug=tournament.slug, match_id=match.pk)
