"""Which lines a stage sends on to the next one.

Kept apart from scheduling (which draws the next stage from these seeds) and from the lifecycle
(which compares the seeds drawn with the seeds the standings give now, once a result changes).
"""

from __future__ import annotations

import logging

from django.utils.translation import gettext as _

from tournaments.algorithms import bracket
from tournaments.exceptions import ScheduleError
from tournaments.services.entries import withdrawn_line_ids
from tournaments.services.standings import stage_standings

logger = logging.getLogger(__name__)


def duplicate_seeds(stage, count):
    """Seeds from a duplicate stage's ranking against the field: in a Mitchell each direction's
    top lines place by place (the North-South and East-West winners seeds 1 and 2), in a Howell
    the top ``count`` (``services.duplicate.qualifying_lines``)."""
    from tournaments.models import BoardSet, Line
    from tournaments.services import duplicate

    board_set = BoardSet.objects.filter(stage=stage).select_related("stage__tournament").first()
    if board_set is None:
        raise ScheduleError(_("Draw the boards of “%(stage)s” first.") % {"stage": stage.name})
    ids = duplicate.qualifying_lines(board_set, count, withdrawn_line_ids(stage.tournament_id))
    lines = Line.objects.in_bulk(ids)
    return [lines[line_id] for line_id in ids]


def crossed_seeds(stage, per_group):
    """Seeds for the next stage: the top ``per_group`` of each group, crossed (A1 v B2 …)."""
    withdrawn = withdrawn_line_ids(stage.tournament_id)
    rankings = []
    for group, rows in stage_standings(stage):
        # a line withdrawn before the next stage starts is left out of its draw
        rows = [row for row in rows if row.line.pk not in withdrawn]
        if len(rows) < per_group:
            raise ScheduleError(
                _("Group %(group)s has fewer than %(n)d lines.")
                % {"group": group.name, "n": per_group}
            )
        rankings.append([row.line for row in rows])
    return bracket.crossed_qualifiers(rankings, per_group)
