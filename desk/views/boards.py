"""The printed sheets of a duplicate stage's boards, with their QR codes, for the organizer only.

A volunteer prepares one deck per board from its sheet (the cards from the top of the deck, the
dealer, the check); the QR code carries the same board for a phone or an online platform. The
cards are secret until every table has played them, so only those who run the stages see this
page (`Action.RUN_STAGES`, docs/access.md).
"""

import logging

from django.http import Http404
from django.shortcuts import render
from django.utils.translation import get_language

from scopa.boards import qr_payload, sheet_text
from scoresheets.qr import qr_svg
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.models import BoardSet, Stage
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
