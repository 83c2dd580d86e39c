"""Reading what is stored: the version in force and the deals of a match's result.

The deals are kept once, in the version's sheet; every page, the API and the export read them
here, in one query for any number of matches.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from tournaments.models import (
    Match,
    ResultVersion,
)
from tournaments.services.results.reading import Deal, deals_of
from tournaments.services.rows import one_row

logger = logging.getLogger(__name__)


def deals_of_match(match: Match) -> list[Deal]:
    """The deals of ``match``'s result in force (none without one), as
    :func:`deals_of_version` gives them; one query."""
    return _last_capture_restored(match, deals_in_force([match.pk]).get(match.pk, []))


def deals_of_version(match: Match, version: ResultVersion | None) -> list[Deal]:
    """The deals of ``version``, the version in force a form was given (none for ``None`` or a
    deletion), as the form shows them again: a version made before the sheet kept the last
    capture gets it back where the rules tell it (a level last tie-break deal: the line that
    made it lost, and ``match`` says who won)."""
    return _last_capture_restored(match, deals_of(version.sheet if version is not None else None))


def _last_capture_restored(match: Match, deals: list[Deal]) -> list[Deal]:
    tiebreaks = [deal for deal in deals if deal.is_tiebreak]
    last = tiebreaks[-1] if tiebreaks else None
    lines = (match.home_id, match.away_id)
    if (
        last is not None
        and last.last_capture is None
        and last.points[0] == last.points[1]
        and match.winner_id is not None
        and match.winner_id in lines
    ):
        last.last_capture = 1 - lines.index(match.winner_id)
    return deals


def deals_in_force(match_ids: Iterable[int]) -> dict[int, list[Deal]]:
    """The deals of each match's result in force, by match id (a match without one is left
    out), in one query: its version's sheet is the one place they are kept."""
    return {
        match_id: deals_of(sheet)
        for match_id, sheet in ResultVersion.objects.filter(
            match__in=match_ids, status=ResultVersion.Status.IN_FORCE, sheet__isnull=False
        )
        .order_by()
        .values_list("match_id", "sheet")
    }


def in_force(match: Match) -> ResultVersion | None:
    """The version of ``match``'s result in force (a deletion counts), or ``None``.

    At most one row (a database constraint), so no ordering: the model's default one would join
    the match, round, stage and tournament on every result saved (nor first()'s by key)."""
    return one_row(
        ResultVersion.objects.filter(
            match=match, status=ResultVersion.Status.IN_FORCE
        ).select_related("author", "submission")
    )


def in_force_id(match: Match) -> int | None:
    """The id of ``match``'s version in force, or ``None``: one query, no row to build."""
    return one_row(
        ResultVersion.objects.filter(match=match, status=ResultVersion.Status.IN_FORCE).values_list(
            "pk", flat=True
        )
    )
