"""The printed sheets of a duplicate stage's boards, with their QR codes, for the organizer only;
and the director's rulings on a board at a table (a fouled deck, a board not played), which those
who decide disputed results give (`Action.DECIDE`) from the match's desk page.

A volunteer prepares one deck per board from its sheet (the cards from the top of the deck, the
dealer, the check); the QR code carries the same board for a phone or an online platform. The
cards are secret until every table has played them, so only those who run the stages see this
page (`Action.RUN_STAGES`, docs/access.md).
"""

import logging

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from desk.forms import BoardRulingForm, errors_sentence
from scopa.boards import qr_payload, sheet_text
from scoresheets.qr import qr_svg
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.exceptions import TournamentError
from tournaments.models import BoardAdjustment, BoardSet, Stage
from tournaments.services import duplicate

logger = logging.getLogger(__name__)


@desk_login_required
def board_sheets(request, slug, stage_id):
    """One printed page per board: the sheet `scopa.boards.board_from_sheet` reads back, and
    its QR code."""
    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    stage = sel.get_stage(tournament, stage_id)
    board_set = BoardSet.objects.filter(stage=stage).first()
    if stage.kind != Stage.Kind.DUPLICATE or board_set is None:
        raise Http404("No boards in this stage")
    lang = "en" if (get_language() or "it").startswith("en") else "it"
    holders = duplicate.tables_holding(board_set)
    sheets = [
        {
            "board": board,
            "text": sheet_text(board, lang),
            "qr": qr_svg(qr_payload(board)),
            "tables": holders.get(board.number, 0),
        }
        for board in duplicate.boards_of(board_set)
    ]
    logger.info("stage %s: %d board sheets shown", stage.pk, len(sheets))
    return render(
        request,
        "desk/boards.html",
        {"tournament": tournament, "stage": stage, "board_set": board_set, "sheets": sheets},
    )


@desk_login_required
@require_POST
def rule_board(request, slug, match_id):
    """Record a ruling on one of the match's boards: it scores the adjusted percentages by
    fault (``services.duplicate.rule_board``, logged)."""
    tournament = desk_tournament(request, slug, Action.DECIDE)
    match = sel.desk_match(tournament, match_id)
    boards = duplicate.board_numbers_of_match(match)
    if not boards:
        raise Http404("Not a match of a duplicate stage")
    form = BoardRulingForm(request.POST, match=match, boards=boards)
    if form.is_valid():
        data = form.cleaned_data
        try:
            duplicate.rule_board(
                match,
                data["board"],
                kind=data["kind"],
                fault=data["fault"],
                note=data["note"],
                deck=data["deck"],
                user=request.user,
            )
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            if data["kind"] == BoardAdjustment.Kind.OTHER_DECK:
                text = _(
                    "Board %(board)d is compared only among the tables that held the same deck."
                )
            else:
                text = _("Board %(board)d scores the adjusted percentages.")
            messages.success(request, text % {"board": data["board"]})
    else:
        messages.error(request, errors_sentence(form))
    return redirect("desk:match", slug=tournament.slug, match_id=match.pk)


@desk_login_required
@require_POST
def clear_ruling(request, slug, match_id, board):
    """Withdraw the ruling on a board: the deal stored for it counts again."""
    tournament = desk_tournament(request, slug, Action.DECIDE)
    match = sel.desk_match(tournament, match_id)
    if not duplicate.board_numbers_of_match(match):
        raise Http404("Not a match of a duplicate stage")
    try:
        cleared = duplicate.clear_ruling(match, board, user=request.user)
    except TournamentError as error:  # a closed stage's scores are final
        messages.error(request, str(error))
    else:
        if cleared:
            messages.success(
                request, _("Board %(board)d counts its deal again.") % {"board": board}
            )
        else:
            messages.error(request, _("Board %(board)d had no ruling.") % {"board": board})
    return redirect("desk:match", slug=tournament.slug, match_id=match.pk)
