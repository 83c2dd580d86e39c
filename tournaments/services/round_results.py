"""A round's results typed at the desk from the slips, table by table, saved together.

Each table's result goes through the one writer (``results.save_result``, the desk's own path:
versions, precedence, the engine's referee and match-end rule) in one batch
(``results.written_together``): the results saved are announced once. A table whose result is
refused keeps its reason and is left out, in a savepoint of its own, while the others are saved;
a table someone else saved meanwhile is refused as stale (``StaleResult``), never overwritten.

A knock-out round is left to the one-match form: its matches move lines into the next round,
and it has tie-break deals and the last capture, which the match's page shows in full.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils.translation import gettext as _

from tournaments.exceptions import ResultError, StaleResult, TournamentError
from tournaments.models import Match, ResultVersion, Round, Stage
from tournaments.services import results

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TableResult:
    """One table's result as typed: the deals (``results.save_result``'s ``deals``), whether the
    time limit ended it, and the version in force the page showed (``""``: none; ``None``: the
    page did not say, refused as ``VersionRequired``)."""

    match_id: int
    deals: list[dict[str, Any]]
    time_expired: bool = False
    based_on: results.BasedOn = ""


@dataclass
class TableOutcome:
    """What became of one table's result: ``saved`` (a new version in force), ``unchanged``
    (this very result was already in force: the page sent twice), or refused with ``refusal``;
    ``stale`` when someone else's result came into force meanwhile (``current`` is it)."""

    match_id: int
    saved: bool = False
    unchanged: bool = False
    refusal: str = ""
    stale: bool = False
    current: ResultVersion | None = field(default=None, repr=False)


def refusal_for_round(round_: Round) -> str:
    """Why ``round_``'s results cannot be typed together (a sentence), or ``""``."""
    stage = round_.stage
    if stage.kind == Stage.Kind.KNOCKOUT:
        return _(
            "The results of a knock-out round are entered match by match (tie-break deals, "
            "the last capture): open each match from the missing results."
        )
    if stage.status == Stage.Status.CLOSED:
        return _("This stage is closed: its results are final and cannot be changed here.")
    return ""


def tables_to_enter(round_: Round, *, also: Iterable[int] = ()) -> list[Match]:
    """The round's tables with two lines and no result yet, and those of ``also`` (tables of the
    round a page sent, with a result since), in table order, each with ``in_force_number``: the
    number of its version in force (``None`` for none; a deleted result is a version in force
    too), which the page sends back as the version its slip was typed at."""
    in_force = ResultVersion.objects.filter(
        match=OuterRef("pk"), status=ResultVersion.Status.IN_FORCE
    ).order_by()
    return list(
        Match.objects.filter(round=round_, home__isnull=False, away__isnull=False)
        .filter(~Q(status=Match.Status.DONE) | Q(pk__in=list(also)))
        .annotate(in_force_number=Subquery(in_force.values("number")[:1]))
        .select_related("home", "away")
        .order_by("table_number", "id")
    )


def enter_round_results(
    round_: Round, tables: Sequence[TableResult], *, user: Any
) -> list[TableOutcome]:
    """Save the results typed for ``round_``'s tables, each as the desk's one-match form saves
    it, in one transaction and one batch; returns one outcome per table, in the given order.

    A refused table (the referee, the match-end rule, a stale or missing ``based_on``, a match
    not of this round) saves nothing of its own and stops no other. A round that cannot be
    entered this way (:func:`refusal_for_round`) raises ``ResultError``."""
    refusal = refusal_for_round(round_)
    if refusal:
        raise ResultError(refusal)
    outcomes = [TableOutcome(table.match_id) for table in tables]
    if not tables:
        return outcomes
    ids = {table.match_id for table in tables}
    with transaction.atomic(), results.written_together() as batch:
        held = results.lock_matches(ids)
        batch.preload(held.values())
        for table, outcome in zip(tables, outcomes, strict=True):
            match = held.get(table.match_id)
            if match is None or match.round_id != round_.pk:
                outcome.refusal = _("This match is not a table of this round.")
                continue
            _enter_one(batch, held, table, outcome, user=user)
    saved = sum(outcome.saved for outcome in outcomes)
    logger.info("round %s: %d of %d results saved from the slips", round_.pk, saved, len(tables))
    return outcomes


def _enter_one(
    batch: results.ResultBatch,
    held: dict[int, Match],
    table: TableResult,
    outcome: TableOutcome,
    *,
    user: Any = None,
) -> None:
    with batch.writing(held, table.match_id) as match:
        refusal = results.entry_refusal(match)
        if refusal:
            outcome.refusal = refusal
            return
        mark = batch.mark()
        try:
            saved = results.save_result(
                match,
                table.deals,
                user=user,
                time_expired=table.time_expired,
                based_on=results.named_version(table.based_on),
                reason_required=True,
            )
        except StaleResult as stale:
            batch.undo(mark, match)
            outcome.refusal, outcome.stale, outcome.current = str(stale), True, stale.current
        except TournamentError as refused:
            batch.undo(mark, match)  # its savepoint undid what it wrote
            outcome.refusal = str(refused)
        else:
            outcome.saved, outcome.unchanged = saved.created, not saved.created
