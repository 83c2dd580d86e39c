"""The prize list on the desk: add and remove prizes (the podium page shows the list and who
gets each prize). Access through ``access.desk_tournament`` with ``Action.EDIT_TOURNAMENT``."""

import logging

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from desk.forms import PrizeForm, errors_sentence
from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.exceptions import TournamentError
from tournaments.services import prizes

logger = logging.getLogger(__name__)


@desk_login_required
@require_POST
def add_prize(request, slug):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    form = PrizeForm(request.POST)
    if form.is_valid():
        try:
            prize = prizes.add_prize(tournament, user=request.user, **form.cleaned_data)
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, _("Prize “%(label)s” added.") % {"label": prize.label})
    else:
        messages.error(request, errors_sentence(form))
    return redirect("desk:podium", slug=tournament.slug)


@desk_login_required
@require_POST
def remove_prize(request, slug, prize_id):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    try:
        prizes.remove_prize(tournament, prize_id, user=request.user)
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Prize removed."))
    return redirect("desk:podium", slug=tournament.slug)
