"""Storing match results: manual entry deal by deal, and verdicts of the rules engine.

Every source (desk, admin, API, verified record, import, forfeit, the bye of a draw) ends in
:func:`_save_version`,
which runs in ONE transaction with the match row locked (``select_for_update``), stores a new
:class:`~tournaments.models.ResultVersion`, checks the version the save was based on, applies
precedence (a record never silently replaces the organizer's result), and, for a version that
comes into force, projects it: scores VP/MP with the tournament's table, advances knock-out
lines, records the change, and announces it with ``signals.results_written`` inside the
transaction and ``signals.results_changed`` once committed (once per transaction; a group of
verified records is written together: see
:class:`ResultBatch`). Every refusal is a :class:`ResultError` raised
before anything is written (or inside the transaction, which then rolls back).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import NamedTuple

from django.db import transaction
from django.db.models import Max, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from scopa import match_end, sheet
from scopa.variants import get_variant
from tournaments.algorithms import vp as vp_algo
from tournaments.exceptions import ResultError, StaleResult, TournamentError
from tournaments.models import (
    EndRule,
    Match,
    MatchResult,
    Outcome,
    ResultVersion,
    Stage,
    engine_lang,
)
from tournaments.services import changelog, rows
from tournaments.services.vp import vp_table_from_model
from tournaments.signals import results_changed, results_written
from tournaments.sources import ResultSource, speaks_for_organizer

logger = logging.getLogger(__name__)

MAX_TIEBREAK_DEALS = match_end.TIEBREAK_DEALS
MAX_DEALS = 60
MAX_DEAL_POINTS = 99
"""No deal scores more (a few dozen scope at most): larger figures are typing errors, and would
overflow the stored points."""
# What a deal's number can be: only an import gives numbers itself, and it refuses what the
# deal rows kept before migration 0013 could not hold (a small integer), so a file is judged the
# same either side of it.
MAX_DEAL_NUMBER = 32767
_CATEGORY = re.compile(r"^[a-z][a-z0-9_]{0,29}$")
PLAYED_OUTCOMES = {Outcome.COMPLETED, Outcome.TIMEOUT, Outcome.ABANDON}
OFFENCE_OUTCOMES = {Outcome.TIMEOUT, Outcome.ABANDON, Outcome.FORFEIT}


@dataclass
class Deal:
    """One deal as stored: points and breakdown for (home, away)."""

    number: int
    points: tuple[int, int]
    breakdown: tuple[dict, dict]
    is_tiebreak: bool = False
    is_penalty: bool = False
    last_capture: int | None = None


@dataclass
class Decision:
    """What a result amounts to: totals, winner side (``None`` for a draw), margin."""

    totals: tuple[int, int]
    winner_side: int | None
    margin: int
    outcome: str
    offender_side: int | None = None
    deals: list[Deal] = field(default_factory=list)


# --------------------------------------------------------------------------- parsing


def _as_int(value, what):
    """An int from a JSON number or a digit string; anything else is refused, and so is a
    number no deal can score (it would overflow the stored points)."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        try:
            number = int(value.strip())
        except ValueError:  # pragma: no cover - isdecimal() strings are int()-readable
            number = None
    if number is None:
        raise ResultError(_("%(what)s must be a whole number.") % {"what": what})
    if number > MAX_DEAL_POINTS:
        raise ResultError(
            _("%(what)s: %(value)d is more than a deal can score (at most %(max)d).")
            % {"what": what, "value": number, "max": MAX_DEAL_POINTS}
        )
    return number


def _parse_deal(index, raw) -> Deal:
    label = _("Deal %(n)d") % {"n": index + 1}
    if not isinstance(raw, dict):
        raise ResultError(_("%(deal)s: expected points and breakdown.") % {"deal": label})
    points = raw.get("points")
    if not isinstance(points, list | tuple) or len(points) != 2:
        raise ResultError(_("%(deal)s: give the points of both lines.") % {"deal": label})
    points = tuple(_as_int(p, _("%(deal)s: points") % {"deal": label}) for p in points)
    if min(points) < 0:
        raise ResultError(_("%(deal)s: points cannot be negative.") % {"deal": label})
    breakdown = raw.get("breakdown")
    if breakdown is None:
        breakdown = [{}, {}]
    if not isinstance(breakdown, list | tuple) or len(breakdown) != 2:
        raise ResultError(_("%(deal)s: give the breakdown of both lines.") % {"deal": label})
    clean = []
    for side, (side_points, side_breakdown) in enumerate(zip(points, breakdown, strict=True)):
        if not isinstance(side_breakdown, dict):
            raise ResultError(_("%(deal)s: the breakdown must list categories.") % {"deal": label})
        parsed = {}
        for category, value in side_breakdown.items():
            if not isinstance(category, str) or not _CATEGORY.match(category):
                raise ResultError(
                    _("%(deal)s: unknown category “%(category)s”.")
                    % {"deal": label, "category": category}
                )
            value = _as_int(
                value, _("%(deal)s: %(category)s") % {"deal": label, "category": category}
            )
            if value < 0:
                raise ResultError(
                    _("%(deal)s: %(category)s cannot be negative.")
                    % {"deal": label, "category": category}
                )
            if value:
                parsed[category] = value
        if sum(parsed.values()) != side_points:
            raise ResultError(
                _(
                    "%(deal)s: the breakdown of the %(side)s line adds up to %(sum)d, "
                    "not to its %(points)d points."
                )
                % {
                    "deal": label,
                    "side": _("home") if side == 0 else _("away"),
                    "sum": sum(parsed.values()),
                    "points": side_points,
                }
            )
        clean.append(parsed)
    last_capture = raw.get("last_capture")
    if last_capture is not None and last_capture not in (0, 1):
        raise ResultError(_("%(deal)s: the last capture is made by side 0 or 1.") % {"deal": label})
    return Deal(
        number=index,
        points=points,
        breakdown=(clean[0], clean[1]),
        is_tiebreak=bool(raw.get("tiebreak", False)),
        is_penalty=bool(raw.get("penalty", False)),
        last_capture=last_capture,
    )


def parse_deals(deals) -> list[Deal]:
    """Check the shape of manually entered deals (points, breakdown sums)."""
    if not isinstance(deals, list | tuple):
        raise ResultError(_("Deals must be a list."))
    if len(deals) > MAX_DEALS:
        raise ResultError(_("Too many deals (at most %(n)d).") % {"n": MAX_DEALS})
    return [_parse_deal(index, raw) for index, raw in enumerate(deals)]


# --------------------------------------------------------------------------- deciding


def _is_knockout(match) -> bool:
    return match.round.stage.kind == Stage.Kind.KNOCKOUT


def _end_rule(match) -> match_end.EndRule:
    """The engine's match-end rule for a two-line match of this tournament."""
    tournament = match.round.stage.tournament
    by_deals = tournament.end_rule == EndRule.DEALS
    return match_end.EndRule(
        target=None if by_deals else tournament.end_value,
        deals=tournament.end_value if by_deals else None,
        knockout=_is_knockout(match),
        sides=2,
        no_capture_loses=get_variant(tournament.variant).fifteen,
    )


def _side_names(match):
    return [
        getattr(match.home, "name", None) or str(_("home")),
        getattr(match.away, "name", None) or str(_("away")),
    ]


def _referee(match, deals: list[Deal], offender_side) -> None:
    """The engine's deal-sheet referee on every deal: a deal that no play of the variant can give
    (a category to both lines, more than it gives, scope no deal holds...) is refused with the
    referee's sentences, before anything is stored."""
    tournament = match.round.stage.tournament
    lang = engine_lang()
    names = _side_names(match)
    for deal in deals:
        problems = sheet.check_deal(
            tournament.variant,
            tournament.options or {},
            tournament.seats,
            sheet.DealSheet(deal.breakdown, deal.is_penalty, offender_side),
        )
        if problems:
            label = _("Deal %(n)d") % {"n": deal.number + 1}
            sentences = "; ".join(problem.message(lang, names) for problem in problems[:3])
            raise ResultError(f"{label}: {sentences}.")


def _match_end_message(problem: match_end.MatchEndProblem) -> str:
    """The desk's sentence for why the engine finds the deals no finished match."""
    params = dict(problem.params)
    messages = {
        "no_deals": lambda: _("Enter at least one deal."),
        "regular_after_tiebreak": lambda: _(
            "Deal %(n)d: regular deals cannot follow tie-break deals."
        ),
        "tiebreak_not_knockout": lambda: _("Tie-break deals are only played in knock-out matches."),
        "penalty_without_offence": lambda: _(
            "Penalty points belong only to a timeout or an abandon."
        ),
        "penalty_not_last": lambda: _(
            "Only the last deal, the interrupted one, can carry penalty points."
        ),
        "offender_missing": lambda: _("Say which line timed out, abandoned or forfeited."),
        "penalty_missing": lambda: _(
            "A timeout or abandon ends with the interrupted deal: mark the last deal as "
            "penalty (unsecured points and one scopa to the opponent)."
        ),
        "penalty_without_scopa": lambda: _(
            "The penalty gives the opponent of the offending line at least one scopa."
        ),
        "over_before": lambda: _("The match was already over after deal %(n)d (%(h)d–%(a)d)."),
        "tiebreak_decided_early": lambda: _("Tie-break deal %(n)d already decided the match."),
        "tiebreak_expected": lambda: _(
            "Deal %(n)d: the match was level before it, so it is a tie-break deal: mark it as one."
        ),
        "tiebreak_not_level": lambda: _(
            "Tie-break deals are only played when the match ends level."
        ),
        "knockout_level": lambda: _(
            "A knock-out match cannot end level: enter the tie-break deals (up to three)."
        ),
        "tiebreak_level": lambda: _(
            "Tie-break deal %(n)d ended level: another tie-break deal is needed."
        ),
        "last_capture_missing": lambda: _(
            "The third tie-break deal ended level: say which line made the last capture (it loses)."
        ),
        "too_few_deals": lambda: ngettext(
            "The match is played over %(n)d deals; only %(got)d entered.",
            "The match is played over %(n)d deals; only %(got)d entered.",
            params.get("got", 0),
        ),
        "level_when_time_ran_out": lambda: _(
            "Level when time ran out: further deals are played until one line is ahead."
        ),
        "level_at_target": lambda: _(
            "Level at %(h)d–%(a)d: further deals are played until one line is ahead."
        ),
        "not_finished": lambda: _(
            "The match is not finished: nobody has reached %(target)d points while ahead "
            "(%(h)d–%(a)d)."
        ),
    }
    text = messages.get(problem.code)
    if text is None:  # pragma: no cover - every engine code has its sentence above
        logger.error("no sentence for match-end problem %s", problem.code)
        return _("The deals do not make a finished match.")
    return text() % params


def decide(match, deals: list[Deal], *, outcome, offender_side=None, time_expired=False):
    """Judge entered deals: the engine's sheet referee on each deal, then the engine's one
    match-end rule (``scopa.match_end``); raise ``ResultError`` if they do not make a
    finished match."""
    knockout = _is_knockout(match)
    outcome = Outcome(outcome)
    if outcome == Outcome.FORFEIT:
        if deals:
            raise ResultError(_("A forfeited match has no deals."))
        if offender_side not in (0, 1):
            raise ResultError(_("Say which line timed out, abandoned or forfeited."))
        winner = 1 - offender_side
        totals = [0, 0]
        totals[winner] = vp_algo.FORFEIT_MARGIN
        return Decision(
            (totals[0], totals[1]), winner, vp_algo.FORFEIT_MARGIN, outcome, offender_side
        )
    if outcome not in PLAYED_OUTCOMES:
        raise ResultError(_("Unknown outcome."))
    _referee(match, deals, offender_side if outcome != Outcome.COMPLETED else None)
    tournament = match.round.stage.tournament
    sheet_deals = [
        match_end.SheetDeal(deal.points, deal.is_tiebreak, deal.is_penalty, deal.last_capture)
        for deal in deals
    ]
    sheet_outcome: match_end.SheetOutcome = "completed"
    if outcome == Outcome.TIMEOUT:
        sheet_outcome = "timeout"
    elif outcome == Outcome.ABANDON:
        sheet_outcome = "abandon"
    try:
        judged = match_end.judge_sheet(
            _end_rule(match),
            sheet_deals,
            outcome=sheet_outcome,
            offender=offender_side,
            time_expired=bool(time_expired and tournament.time_limit_s),
        )
    except match_end.SheetRefused as refusal:
        raise ResultError(_match_end_message(refusal.problem)) from refusal
    if judged.winner is None and knockout:  # pragma: no cover - the engine never draws one
        raise ResultError(_("A knock-out match cannot end level."))
    offender = offender_side if outcome != Outcome.COMPLETED else None
    final = (judged.totals[0], judged.totals[1])
    return Decision(final, judged.winner, judged.margin, outcome, offender, deals)


# --------------------------------------------------------------------------- storing


def _lock(match) -> Match:
    return (
        Match.objects.select_for_update(of=("self",))
        .select_related("round__stage__tournament__vp_table", "home", "away")
        .get(pk=match.pk)
    )


def _check_lines(match):
    if match.round.stage.status == Stage.Status.CLOSED:
        raise ResultError(
            _(
                "Stage “%(stage)s” is closed: its results are final. Reopen the stage to change "
                "them (a following stage seeded from it is not regenerated)."
            )
            % {"stage": match.round.stage.name}
        )
    if match.home_id is None or match.away_id is None:
        raise ResultError(_("This match does not have both lines yet."))
    if match.outcome == Outcome.BYE:
        raise ResultError(_("A bye has no result to enter."))


def _offender_side(match, offender):
    if offender is None:
        return None
    offender_id = getattr(offender, "pk", offender)
    if offender_id == match.home_id:
        return 0
    if offender_id == match.away_id:
        return 1
    raise ResultError(_("The offending line does not play this match."))


def _move_line(dependent_id, slot, line_id, source):
    """Put ``line_id`` into a later knock-out match, refusing if that match has a result."""
    if dependent_id is None:
        return
    dependent = Match.objects.select_for_update().get(pk=dependent_id)
    attribute = "home_id" if slot == Match.Slot.HOME else "away_id"
    if getattr(dependent, attribute) == line_id:
        return
    if dependent.status == Match.Status.DONE and dependent.outcome != Outcome.BYE:
        raise ResultError(
            _(
                "The result of the later match “%(later)s” depends on this one: delete that "
                "result first."
            )
            % {"later": dependent}
        )
    setattr(dependent, attribute, line_id)
    dependent.save(update_fields=[attribute.removesuffix("_id"), "updated_at"])
    logger.info("match %s: line %s moves on to match %s", source.pk, line_id, dependent.pk)


def _advance(match, winner_id, loser_id):
    _move_line(match.next_match_id, match.next_slot, winner_id, match)
    _move_line(match.loser_next_match_id, match.loser_next_slot, loser_id, match)


class ResultBatch:
    """Results written together in one transaction (a group of verified records).

    The same writer runs for each result; what the batch changes is where its rows go: the
    versions in force and the last version numbers of the batch's matches are read once
    (:meth:`preload`, with the matches when :func:`lock_matches` read them), VP tables once,
    and the new versions, the versions they put out of force and the projection (deal and score
    rows, the match row, the change log) are written in one statement per table by
    :meth:`flush`. The results are announced once inside the transaction (``results_written``)
    and once after the commit (``results_changed``), or not at all (:func:`written_together`).

    A caller that undoes one result (its savepoint rolled back) calls :meth:`undo` with the
    :meth:`mark` taken before it. A match whose rows are still pending, or a knock-out match
    (its result moves lines into other matches' rows), needs :meth:`flush` before it is written
    again (:meth:`must_flush_before`); flushing inside a result's savepoint would tie earlier
    results to its fate. Callers write each result inside :meth:`writing`, which applies that
    rule and reads again the matches a knock-out result moved lines into.
    """

    def __init__(self) -> None:
        self.announce: list[int] = []
        # the announced matches as the writer left them (locked until the commit)
        self.written: dict[int, Match] = {}
        self.vp_tables: dict[int, vp_algo.VPTable] = {}
        self._current: dict[int, ResultVersion | None] = {}
        self._last: dict[int, int] = {}
        self._versions: list[ResultVersion] = []
        self._superseded: list[ResultVersion] = []
        self._scores: list[tuple] = []
        self._matches: list[Match] = []
        # ids of the matches with rows in _matches or _versions (pending() is asked per record)
        self._pending: set[int] = set()
        self._logs: list = []

    def preload(self, matches) -> None:
        """Read the last version numbers and the versions in force of ``matches``; matches
        read by :func:`lock_matches` bring both numbers along, and only versions in force
        are read then (a fresh match costs no query)."""
        matches = [m for m in matches if m.pk not in self._last]
        if not matches:
            return
        ids = [m.pk for m in matches]
        self._current.update(dict.fromkeys(ids))
        if all(hasattr(m, "last_version") for m in matches):
            self._last.update({m.pk: m.last_version or 0 for m in matches})
            in_force = [m.in_force_id for m in matches if m.in_force_id is not None]
            if not in_force:
                return
            wanted = Q(pk__in=in_force)
        else:
            self._last.update(dict.fromkeys(ids, 0))
            for match_id, last in (
                ResultVersion.objects.filter(match__in=ids)
                .values_list("match")
                .annotate(last=Max("number"))
                .values_list("match", "last")
            ):
                self._last[match_id] = last
            wanted = Q(match__in=ids, status=ResultVersion.Status.IN_FORCE)
        for version in (
            ResultVersion.objects.filter(wanted)
            .select_related("author", "submission")
            .defer("submission__document", "submission__verdict")  # the writer reads neither
        ):
            self._current[version.match_id] = version

    def knows(self, match) -> bool:
        return match.pk in self._last

    def current(self, match) -> ResultVersion | None:
        return self._current[match.pk]

    def last_number(self, match) -> int:
        return self._last[match.pk]

    def remember(self, version) -> None:
        if version.match_id not in self._last:
            return
        self._last[version.match_id] = max(self._last[version.match_id], version.number)
        if version.status == ResultVersion.Status.IN_FORCE:
            self._current[version.match_id] = version

    def pending(self, match) -> bool:
        """Rows of ``match`` wait for the flush (its projection, or a version of it)."""
        return match.pk in self._pending

    def must_flush_before(self, match) -> bool:
        # pending: its version may wait alone (a record waiting for a decision projects nothing)
        return self.pending(match) or (bool(self._matches) and _linked(match))

    def writes_now(self, match) -> bool:
        """Whether writing a result of ``match`` touches the database before the flush: a
        result over a projection clears it (:func:`_project`), a knock-out result moves lines
        into later matches (:func:`_advance`). Any other result only gathers rows here, and
        :meth:`undo` alone takes it back."""
        return match.status != Match.Status.SCHEDULED or _linked(match)

    @contextmanager
    def writing(self, held: dict[int, Match], match_id: int) -> Iterator[Match]:
        """Write one result of the locked matches ``held`` (from :func:`lock_matches`): the
        batch is flushed first when its rule says so (outside the caller's savepoint for the
        record), and afterwards the matches a knock-out result moved lines into are read again,
        locked, into ``held``."""
        match = held[match_id]
        if self.must_flush_before(match):
            self.flush()
        yield match
        later = {match.next_match_id, match.loser_next_match_id} & held.keys()
        if later:
            held.update(lock_matches(later))

    def mark(self) -> tuple[int, ...]:
        return tuple(len(gathered) for gathered in self._gathered())

    def _gathered(self) -> tuple[list, ...]:
        return (
            self.announce,
            self._versions,
            self._superseded,
            self._scores,
            self._matches,
            self._logs,
        )

    def undo(self, mark, match) -> None:
        """Forget what was gathered since ``mark`` (the result of ``match`` was rolled back)."""
        for gathered, length in zip(self._gathered(), mark, strict=True):
            del gathered[length:]
        self._pending = {m.pk for m in self._matches} | {v.match_id for v in self._versions}
        self._last.pop(match.pk, None)
        self._current.pop(match.pk, None)
        # what lock_matches read along with the match may predate the batch's flushes
        for name in ("last_version", "in_force_id"):
            match.__dict__.pop(name, None)

    def defer_version(self, version, superseded=None) -> None:
        """A new version (and the one it puts out of force), inserted by :meth:`flush`."""
        if superseded is not None:
            self._superseded.append(superseded)
        self._versions.append(version)
        self._pending.add(version.match_id)

    def defer(self, match, scores) -> None:
        """A match's projection: its score rows as ``SCORE_COLUMNS`` tuples, and the match row."""
        self._scores.extend(scores)
        match.updated_at = timezone.now()  # the batch update_each applies no auto_now
        self._matches.append(match)
        self._pending.add(match.pk)

    def defer_log(self, entry) -> None:
        self._logs.append(entry)

    def flush(self) -> None:
        """Write the gathered rows: one statement per table, the versions put out of force
        before the versions that replace them (one version in force per match)."""
        if self._superseded:
            rows.update_each(self._superseded, ["status"])
        if self._versions:
            rows.create_many(self._versions)
        rows.insert_many(MatchResult, SCORE_COLUMNS, self._scores)
        if self._matches:
            latest = {m.pk: m for m in self._matches}  # the last projection of each match
            rows.update_each(latest.values(), PROJECTED_MATCH_FIELDS)
        if self._logs:
            changelog.record_many(self._logs)
        for gathered in self._gathered()[1:]:  # the announcements wait for the end of the batch
            gathered.clear()
        self._pending.clear()


_batch: ContextVar[ResultBatch | None] = ContextVar("result_batch", default=None)


def _linked(match) -> bool:
    """A knock-out match whose result moves lines into later matches."""
    return match.next_match_id is not None or match.loser_next_match_id is not None


def send_results_changed(match_ids, *, written=None) -> None:
    """Send ``results_changed`` for these matches (after a commit), read fresh in one query, or
    ``written``: the matches as a batch wrote them, with their round, stage and tournament,
    locked until the commit (so what it stored)."""
    ids = list(dict.fromkeys(match_ids))
    if not ids:
        return
    if written is not None:
        results_changed.send(sender=Match, matches=list(written))
        return
    fresh = _with_stages(Match.objects.filter(pk__in=ids), len(ids))
    order = {match_id: index for index, match_id in enumerate(ids)}
    results_changed.send(sender=Match, matches=sorted(fresh, key=lambda m: order[m.pk]))


@contextmanager
def written_together(*, announce: bool = True) -> Iterator[ResultBatch]:
    """Inside this block (itself inside a transaction), results are written as one
    :class:`ResultBatch`: flushed at the end of the block, then announced once inside the
    transaction (``results_written``) and once after the commit (``results_changed``).

    ``announce=False`` is the one way to write results without announcing them, for the import
    alone: it restores a whole tournament as the file shows it, where the listeners of
    ``results_changed`` would flag its later rounds for review, forfeit the matches of the lines
    the file shows withdrawn and rate result by result; the import rates the tournament once.
    Nor does it send webhook events (``results_written``): an import is not news."""
    if _batch.get() is not None:
        raise RuntimeError("results are already being written together")
    batch = ResultBatch()
    token = _batch.set(batch)
    try:
        yield batch
        batch.flush()
    finally:
        _batch.reset(token)
    if announce and batch.announce:
        announced = list(dict.fromkeys(batch.announce))
        written = [batch.written[pk] for pk in announced]
        results_written.send(sender=Match, match_ids=announced)
        transaction.on_commit(lambda: send_results_changed(announced, written=written))


def _announce(match):
    batch = _batch.get()
    if batch is not None:
        batch.announce.append(match.pk)
        batch.written[match.pk] = match
        return
    match_id = match.pk
    results_written.send(sender=Match, match_ids=[match_id])
    transaction.on_commit(lambda: send_results_changed([match_id]))


def _vp_table(tournament) -> vp_algo.VPTable:
    batch = _batch.get()
    if batch is not None and tournament.vp_table_id in batch.vp_tables:
        return batch.vp_tables[tournament.vp_table_id]
    try:
        table = vp_table_from_model(tournament.vp_table)
    except TournamentError as error:
        raise ResultError(error.message) from error
    if batch is not None:
        batch.vp_tables[tournament.vp_table_id] = table
    return table


def _copy_state(source, target):
    if source is target:
        return
    for name in (
        "home_id",
        "away_id",
        "winner_id",
        "outcome",
        "offender_id",
        "status",
        "has_tiebreak",
    ):
        setattr(target, name, getattr(source, name))


def decision_from_verdict(match, verdict) -> Decision:
    """Turn a ``scopa.verify_document`` verdict into a Decision (side 0 = home)."""
    if not isinstance(verdict, dict):
        raise ResultError(_("The verdict is not readable."))
    if verdict.get("valid") is False:
        raise ResultError(_("The record is not valid: its result cannot be stored."))
    totals = verdict.get("totals")
    if not isinstance(totals, list | tuple) or len(totals) != 2:
        raise ResultError(_("A tournament match has exactly two lines."))
    if verdict.get("sides", 2) != 2:
        raise ResultError(_("A tournament match has exactly two lines."))
    deals = []
    for index, raw in enumerate(verdict.get("deals") or []):
        if not isinstance(raw, dict) or raw.get("void"):
            continue
        home_points, away_points = (int(p) for p in raw.get("points", (0, 0)))
        home_breakdown, away_breakdown = (
            {key: int(value) for key, value in dict(side).items() if value}
            for side in raw.get("breakdown") or [{}, {}]
        )
        deals.append(
            Deal(
                number=index,
                points=(home_points, away_points),
                breakdown=(home_breakdown, away_breakdown),
                is_tiebreak=bool(raw.get("tiebreak", False)),
                is_penalty=bool(raw.get("interrupted") or raw.get("penalty")),
            )
        )
    outcome_info = verdict.get("outcome") or {}
    kind = outcome_info.get("kind") or "completed"
    try:
        outcome = Outcome(kind)
    except ValueError as error:
        raise ResultError(_("Unknown outcome “%(kind)s”.") % {"kind": kind}) from error
    offender_side = outcome_info.get("side") if outcome in OFFENCE_OUTCOMES else None
    if outcome in OFFENCE_OUTCOMES:
        if offender_side not in (0, 1):
            raise ResultError(_("The verdict does not say which line timed out or abandoned."))
        # The interrupted deal carries the penalty (unsecured points + one scopa); an engine
        # that reports the penalty apart from the deals gets it added to that deal (or to a deal
        # of its own when none was under way), so deals always add up to the totals.
        interrupted = next((d for d in deals if d.is_penalty), None)
        penalty = verdict.get("penalty") or {}
        extra = [int(p) for p in penalty.get("points") or (0, 0)]
        sums = [sum(d.points[side] for d in deals) for side in (0, 1)]
        if sums != [int(t) for t in totals] and [
            a + b for a, b in zip(sums, extra, strict=True)
        ] == [int(t) for t in totals]:
            if interrupted is None:
                interrupted = Deal(
                    number=len(verdict.get("deals") or []),
                    points=(0, 0),
                    breakdown=({}, {}),
                    is_penalty=True,
                )
                deals.append(interrupted)
            points = list(interrupted.points)
            for side in (0, 1):
                if extra[side]:
                    points[side] += extra[side]
                    interrupted.breakdown[side]["penalty"] = (
                        interrupted.breakdown[side].get("penalty", 0) + extra[side]
                    )
            interrupted.points = (points[0], points[1])
        elif interrupted is None and deals:
            deals[-1].is_penalty = True
    winner = verdict.get("winner")
    if winner not in (0, 1, None):
        raise ResultError(_("The verdict names no valid winner."))
    if winner is None and _is_knockout(match):
        raise ResultError(_("A knock-out match cannot end level."))
    if winner is None and outcome != Outcome.COMPLETED:
        raise ResultError(_("A timeout or abandon always has a winner."))
    if sum(d.points[0] for d in deals) != totals[0] or sum(d.points[1] for d in deals) != totals[1]:
        raise ResultError(_("The verdict's deals do not add up to its totals."))
    margin = verdict.get("margin")
    if margin is None:
        margin = match_end.margin([int(t) for t in totals], winner)
    return Decision(
        (int(totals[0]), int(totals[1])),
        winner,
        int(margin),
        outcome,
        offender_side,
        deals,
    )


# --------------------------------------------------------------------------- versions
#
# Every source writes a result the same way: a new ResultVersion under the match's row lock.
# ``_save_version`` checks the version the save was based on, applies precedence, and, when the
# new version comes into force, ``_project`` rewrites MatchResult and the match row (the
# projection standings read). Nothing else writes those tables. The deals are kept once, in the
# version's sheet: :func:`deals_in_force` reads them.

UNCHECKED = object()
"""``based_on`` of a caller that does not edit a version it has shown (forfeits, imports, the
demo data): no stale check."""


@dataclass
class SavedVersion:
    """What a save did: the version it stored (or found), and whether it is a new one."""

    version: ResultVersion
    created: bool


def sheet_of(decision: Decision, *, time_expired=False) -> dict:
    """A decision as the JSON a version keeps: deals, outcome, offending side and result."""
    return {
        "deals": [
            {
                "number": deal.number,
                "points": list(deal.points),
                "breakdown": [dict(deal.breakdown[0]), dict(deal.breakdown[1])],
                "tiebreak": deal.is_tiebreak,
                "penalty": deal.is_penalty,
                "last_capture": deal.last_capture,
            }
            for deal in decision.deals
        ],
        "outcome": str(decision.outcome),
        "offender": decision.offender_side,
        "time_expired": bool(time_expired),
        "result": {
            "totals": list(decision.totals),
            "winner": decision.winner_side,
            "margin": decision.margin,
        },
    }


def decision_of(sheet: dict) -> Decision:
    """The decision a version's sheet records (decided when the version was made)."""
    result = sheet["result"]
    return Decision(
        totals=tuple(result["totals"]),
        winner_side=result["winner"],
        margin=result["margin"],
        outcome=sheet["outcome"],
        offender_side=sheet.get("offender"),
        deals=deals_of(sheet),
    )


def deals_of(sheet: dict | None) -> list[Deal]:
    """The deals a version's sheet records, in order (none for a deletion or a bye)."""
    if not sheet:
        return []
    return [
        Deal(
            number=raw.get("number", index),
            points=(raw["points"][0], raw["points"][1]),
            breakdown=(raw["breakdown"][0], raw["breakdown"][1]),
            is_tiebreak=raw.get("tiebreak", False),
            is_penalty=raw.get("penalty", False),
            last_capture=raw.get("last_capture"),
        )
        for index, raw in enumerate(sheet["deals"])
    ]


def deals_of_match(match) -> list[Deal]:
    """The deals of ``match``'s result in force (none without one), as
    :func:`deals_of_version` gives them; one query."""
    return _last_capture_restored(match, deals_in_force([match.pk]).get(match.pk, []))


def deals_of_version(match, version: ResultVersion | None) -> list[Deal]:
    """The deals of ``version``, the version in force a form was given (none for ``None`` or a
    deletion), as the form shows them again: a version made before the sheet kept the last
    capture gets it back where the rules tell it (a level last tie-break deal: the line that
    made it lost, and ``match`` says who won)."""
    return _last_capture_restored(match, deals_of(version.sheet if version is not None else None))


def _last_capture_restored(match, deals: list[Deal]) -> list[Deal]:
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


def deals_in_force(match_ids) -> dict[int, list[Deal]]:
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


def same_result(a: dict | None, b: dict | None) -> bool:
    """Whether two sheets give the match the same result: outcome, totals, winner, deal points."""
    if a is None or b is None:
        return a is b

    def key(sheet):
        return (
            sheet["outcome"],
            sheet.get("offender"),
            sheet["result"],
            [(d["points"], d.get("tiebreak", False)) for d in sheet["deals"]],
        )

    return key(a) == key(b)


def in_force(match) -> ResultVersion | None:
    """The version of ``match``'s result in force (a deletion counts), or ``None``.

    At most one row (a database constraint), so no ordering: the model's default one would join
    the match, round, stage and tournament on every result saved."""
    return (
        ResultVersion.objects.filter(match=match, status=ResultVersion.Status.IN_FORCE)
        .select_related("author", "submission")
        .order_by()
        .first()
    )


def _based_on_number(based_on):
    """``based_on`` as a version number (``None``: the save was made on a match with no
    version); a ResultVersion, an int or a digit string are accepted."""
    if based_on is None or based_on == "" or based_on == 0 or based_on == "0":
        return None
    if isinstance(based_on, ResultVersion):
        return based_on.number
    try:
        return int(based_on)
    except (TypeError, ValueError) as error:
        raise ResultError(_("The version this save is based on is not a number.")) from error


def _previous_summary(match):
    if match.status != Match.Status.DONE or match.outcome == Outcome.BYE:
        return None
    lines = (match.home_id, match.away_id)
    return {
        "outcome": match.outcome,
        "winner": match.winner_id,
        "totals": [
            r.points for r in sorted(match.results.all(), key=lambda r: r.line_id != lines[0])
        ],
    }


def _unadvance(match):
    """Take this match's lines out of the later knock-out matches they had moved on to."""
    for dependent_id, slot in (
        (match.next_match_id, match.next_slot),
        (match.loser_next_match_id, match.loser_next_slot),
    ):
        if dependent_id is None:
            continue
        dependent = Match.objects.select_for_update().get(pk=dependent_id)
        if dependent.status == Match.Status.DONE and dependent.outcome != Outcome.BYE:
            raise ResultError(
                _(
                    "The result of the later match “%(later)s” depends on this one: delete "
                    "that result first."
                )
                % {"later": dependent}
            )
        attribute = "home" if slot == Match.Slot.HOME else "away"
        setattr(dependent, attribute, None)
        dependent.save(update_fields=[attribute, "updated_at"])


def _project(match, decision: Decision | None) -> list[ScoreRow] | list[MatchResult]:
    """Rewrite the projection (MatchResult, the match row, later knock-out slots) from the
    decision of the version in force; ``None`` clears it. In a :class:`ResultBatch`
    the new rows wait for its flush."""
    batch = _batch.get()
    if batch is not None and batch.pending(match):
        raise RuntimeError(f"match {match.pk}: flush the batch before writing it again")
    if match.status != Match.Status.SCHEDULED or batch is None:
        # a scheduled match has no projection to clear (it is cleared when it goes back)
        MatchResult.objects.filter(match=match).delete()
    if decision is None:
        _unadvance(match)
        match.winner = None
        match.offender = None
        match.outcome = ""
        match.status = Match.Status.SCHEDULED
        match.has_tiebreak = False
        match.save(update_fields=PROJECTED_MATCH_FIELDS)
        return []
    if decision.outcome == Outcome.BYE:
        return _project_bye(match)
    table = _vp_table(match.round.stage.tournament)
    winner_side = decision.winner_side
    draw = winner_side is None
    score = vp_algo.match_score(
        table, decision.margin, vp_algo.Outcome(decision.outcome), draw=draw
    )
    lines = (match.home_id, match.away_id)
    winner_id = loser_id = None
    if winner_side is not None:
        winner_id, loser_id = lines[winner_side], lines[1 - winner_side]
        _advance(match, winner_id, loser_id)
    results = []
    for side in (0, 1):
        won = not draw and side == winner_side
        if draw:
            vp, mp = score.vp_winner, 0
        elif won:
            vp, mp = score.vp_winner, score.mp_winner
        else:
            vp, mp = score.vp_loser, score.mp_loser
        results.append(ScoreRow(match.pk, lines[side], decision.totals[side], mp, vp, won, draw))
    match.winner_id = winner_id
    match.outcome = decision.outcome
    match.offender_id = None if decision.offender_side is None else lines[decision.offender_side]
    match.status = Match.Status.DONE
    match.has_tiebreak = any(deal.is_tiebreak for deal in decision.deals)
    if batch is not None:
        batch.defer(match, results)
        return results
    rows.insert_many(MatchResult, SCORE_COLUMNS, results)
    match.save(update_fields=PROJECTED_MATCH_FIELDS)
    return results


# The match row's fields a projection writes (``updated_at`` for the rating workers' scan).
PROJECTED_MATCH_FIELDS = ["winner", "outcome", "offender", "status", "has_tiebreak", "updated_at"]


class ScoreRow(NamedTuple):
    """A line's score row of a match, as ``_project`` gathers it (no model instance: a batch
    writes them as plain rows)."""

    match_id: int
    line_id: int
    points: int
    mp: int
    vp: int
    won: bool
    drawn: bool


SCORE_COLUMNS = ScoreRow._fields


def bye_score(stage) -> tuple[int, int, bool]:
    """(VP, MP, won) of a bye as ``stage`` scores it: a set VP score, or a win by forfeit on
    the tournament's VP table."""
    if stage.bye_scoring == Stage.ByeScoring.SET_VP and stage.bye_vp is not None:
        return stage.bye_vp, 0, False
    try:
        table = vp_table_from_model(stage.tournament.vp_table)
    except TournamentError as error:
        raise ResultError(error.message) from error
    score = vp_algo.match_score(table, vp_algo.FORFEIT_MARGIN, vp_algo.Outcome.FORFEIT)
    return score.vp_winner, score.mp_winner, True


def _project_bye(match) -> list[MatchResult]:
    """A bye's projection: one score row for the line that sat out, as its stage scores it."""
    vp, mp, won = bye_score(match.round.stage)
    result = MatchResult.objects.create(
        match=match, line_id=match.home_id, points=0, mp=mp, vp=vp, won=won
    )
    match.winner_id = match.home_id if won else None
    match.outcome = Outcome.BYE
    match.offender_id = None
    match.status = Match.Status.DONE
    match.has_tiebreak = False
    match.save(update_fields=PROJECTED_MATCH_FIELDS)
    return [result]


def _log(match, action, version, *, user, results=(), replaced=None, label=None, **extra):
    sheet = version.sheet
    detail = {
        "version": version.number,
        "source": version.source,
        "based_on": version.based_on.number if version.based_on_id else None,
        "status": str(version.status),
        "reason": version.reason,
        **extra,
    }
    if sheet is not None:
        detail.update(
            outcome=sheet["outcome"],
            totals=sheet["result"]["totals"],
            winner=(
                None
                if sheet["result"]["winner"] is None
                else (match.home_id, match.away_id)[sheet["result"]["winner"]]
            ),
            margin=sheet["result"]["margin"],
        )
    if results:
        detail.update(vp=[r.vp for r in results], mp=[r.mp for r in results])
    if label:
        detail["record"] = label
    detail["replaced"] = replaced
    tournament = match.round.stage.tournament
    batch = _batch.get()
    if batch is not None:
        batch.defer_log(changelog.entry(tournament, action, match=match, user=user, **detail))
    else:
        changelog.record(tournament, action, match=match, user=user, **detail)


def _put_in_force(match, version, current, *, user, action, label=None):
    """Make ``version`` the one in force over ``current`` and project it (match locked); it is
    announced after the commit, by its :class:`ResultBatch` if it is written in one."""
    replaced = _previous_summary(match)
    batch = _batch.get()
    # A new version in a batch waits for its flush, with the one it puts out of force.
    deferred = batch is not None and version.pk is None
    superseded = current if current is not None and current.pk != version.pk else None
    if superseded is not None:
        superseded.status = ResultVersion.Status.SUPERSEDED
        if not deferred:
            superseded.save(update_fields=["status"])
    version.status = ResultVersion.Status.IN_FORCE
    if version.pk is not None:
        version.save(update_fields=["status", "decided_by", "decided_at", "reason"])
    elif not deferred:
        version.save()
    results = _project(match, None if version.sheet is None else decision_of(version.sheet))
    if deferred and batch is not None:
        batch.defer_version(version, superseded)
    _log(match, action, version, user=user, results=results, replaced=replaced, label=label)
    if version.source != ResultSource.BYE:
        # a bye is part of the draw, saved with its round: no result to announce or to flag
        # later rounds with
        _announce(match)


def _save_version(
    match,
    *,
    sheet,
    source,
    user,
    based_on=UNCHECKED,
    reason="",
    submission=None,
    label=None,
    reason_required=False,
) -> SavedVersion:
    """Store a new version of a locked match's result: the one way every source writes one.

    ``based_on`` names the version in force the user saw (a number, or ``None`` for none); a
    save based on another is refused with :class:`StaleResult`, except a re-post of the very
    save that made the version in force (back button, double click), which stores nothing.
    A version from a source that does not speak for the organizer (a verified record) comes into
    force only over no result or the same result; otherwise it waits for a decision.
    """
    batch = _batch.get()
    if batch is not None and not batch.knows(match):
        batch.preload([match])
    current = batch.current(match) if batch is not None else in_force(match)
    author = user if user is not None and getattr(user, "is_authenticated", False) else None
    if based_on is not UNCHECKED:
        seen = _based_on_number(based_on)
        current_number = current.number if current else None
        if seen != current_number:
            # the same post again (back button, double click): it made the version in force
            if (
                current is not None
                and current.sheet == sheet
                and current.source == str(source)
                and current.author_id == (author.pk if author else None)
                and (current.based_on.number if current.based_on else None) == seen
            ):
                return SavedVersion(current, False)
            raise StaleResult(current)
        if current is not None and current.sheet == sheet:
            return SavedVersion(current, False)
    if sheet is None and (match.status != Match.Status.DONE or match.outcome == Outcome.BYE):
        raise ResultError(_("This match has no result to delete."))
    if reason_required and not reason and current is not None and not current.is_removal:
        if sheet is None:
            raise ResultError(_("Say why the result is deleted."))
        raise ResultError(_("Say why the result in force is corrected."))
    if batch is not None:
        last = batch.last_number(match)
    else:
        last = ResultVersion.objects.filter(match=match).aggregate(n=Max("number"))["n"] or 0
    version = ResultVersion(
        match=match,
        number=last + 1,
        source=str(source),
        author=author,
        based_on=current,
        sheet=sheet,
        submission=submission,
        reason=reason or "",
    )
    _place(
        match,
        version,
        current,
        user=user,
        label=label,
        action=_action_for(source, sheet),
        same_action="result.verified",
    )
    if batch is not None:
        batch.remember(version)
    return SavedVersion(version, True)


def _place(match, version, current, *, user, label, action, same_action, **extra):
    """Precedence, for a new version and for a players' sheet both sides signed alike.

    A source that speaks for the organizer comes into force; any other comes into force over no
    result, a deletion, or the same result; otherwise it waits for a decision (a record or a
    players' sheet never silently replaces another result)."""
    if speaks_for_organizer(version.source) or current is None or current.is_removal:
        _put_in_force(match, version, current, user=user, action=action, label=label)
    elif same_result(current.sheet, version.sheet):
        # It says what the result in force says: it comes into force (the public page shows
        # its replay), confirmed if that result was, so a later record cannot push it aside.
        if current.is_confirmed:
            version.decided_at = timezone.now()
            version.reason = _("Same result as version %(n)d.") % {"n": current.number}
        _put_in_force(match, version, current, user=user, action=same_action, label=label)
    else:
        # the two disagree: the organizer (or referee) decides
        version.status = ResultVersion.Status.AWAITING
        batch = _batch.get()
        if batch is not None and version.pk is None:
            batch.defer_version(version)
        else:
            version.save()
        _log(
            match,
            "result.awaiting",
            version,
            user=user,
            label=label,
            in_force=current.number,
            **extra,
        )


def _action_for(source, sheet):
    if sheet is None:
        return "result.deleted"
    if source == ResultSource.BYE:
        return "result.bye"
    if source == ResultSource.IMPORT:
        return "result.imported"
    if not speaks_for_organizer(source):
        return "result.verified"
    return "result.entered"


def save_result(
    match,
    deals,
    *,
    outcome=Outcome.COMPLETED,
    offender=None,
    user=None,
    time_expired=False,
    based_on=UNCHECKED,
    reason="",
    source=None,
    reason_required=False,
) -> SavedVersion:
    """Check a result entered by hand, deal by deal, and store it as a new version.

    ``deals``: ``[{"points": [home, away], "breakdown": [{...}, {...}], "tiebreak": bool,
    "penalty": bool, "last_capture": 0|1}]``; ``penalty`` marks the interrupted deal of a timeout
    or abandon (points after the penalty of docs/match-record.md); ``last_capture`` only for a
    level third tie-break deal. ``time_expired`` ends a time-limited match with the side ahead.
    ``source`` defaults to the desk (a forfeit to ``forfeit``); ``reason_required`` refuses a
    correction without a ``reason``. Refusals raise ``ResultError`` (a stale ``based_on``:
    ``StaleResult``) and save nothing.
    """
    try:
        outcome = Outcome(outcome)
    except ValueError as error:
        raise ResultError(_("Unknown outcome.")) from error
    if source is None:
        source = ResultSource.FORFEIT if outcome == Outcome.FORFEIT else ResultSource.DESK
    parsed = parse_deals(deals)
    with transaction.atomic():
        locked = _lock(match)
        _check_lines(locked)
        if outcome == Outcome.BYE:
            raise ResultError(_("A bye has no result to enter."))
        offender_side = _offender_side(locked, offender)
        if outcome in OFFENCE_OUTCOMES and offender_side is None:
            raise ResultError(_("Say which line timed out, abandoned or forfeited."))
        if outcome == Outcome.COMPLETED and offender_side is not None:
            raise ResultError(_("A completed match has no offending line."))
        decision = decide(
            locked, parsed, outcome=outcome, offender_side=offender_side, time_expired=time_expired
        )
        saved = _save_version(
            locked,
            sheet=sheet_of(decision, time_expired=time_expired),
            source=source,
            user=user,
            based_on=based_on,
            reason=reason,
            reason_required=reason_required,
        )
    _copy_state(locked, match)
    return saved


def bye_sheet(*, won: bool) -> dict:
    """The sheet of a bye: no deals, no opponent, the line that sat out the winner when its
    stage scores a bye as a forfeit win; what it is worth is :func:`bye_score`, applied by the
    projection."""
    return {
        "deals": [],
        "outcome": str(Outcome.BYE),
        "offender": None,
        "time_expired": False,
        "result": {"totals": [0, 0], "winner": 0 if won else None, "margin": 0},
    }


def save_bye(match, *, user=None) -> SavedVersion:
    """Score a bye (a line without opponent in a Danish, Swiss or Mitchell round, or a late
    entry's missed round) as a version from the ``bye`` source, projected like any result."""
    with transaction.atomic():
        locked = _lock(match)
        if locked.home_id is None or locked.away_id is not None:
            raise ResultError(_("A bye is one line without an opponent."))
        sheet = bye_sheet(won=bye_score(locked.round.stage)[2])
        saved = _save_version(locked, sheet=sheet, source=ResultSource.BYE, user=user)
    _copy_state(locked, match)
    return saved


def import_result(
    match, deals, *, totals, winner_side, outcome, offender_side=None, locked=False
) -> SavedVersion:
    """Store a result carried over from a tournament export as a version of source ``import``,
    which speaks for the organizer: the export is the federation's own record of the result.

    ``deals`` as for :func:`save_result`, each with its ``number`` as exported. The match is
    not judged again: it was judged where it was entered, and the export does not keep all a
    fresh judgement needs (the last capture of a level third tie-break deal, a time limit that
    ran out). The shape is checked (each deal as at the desk, a valid outcome, winner and
    offending line, deals that add up to the totals); margin, VP and MP are worked out by the
    projection, as for any source. Announced like any result, unless written in a batch that
    announces nothing, as the import writes its results (see :func:`written_together`).
    ``locked``: as for :func:`apply_verified_result`, the caller's transaction holds the match
    row lock, taken with :func:`lock_matches`.
    """
    try:
        outcome = Outcome(outcome)
    except ValueError as error:
        raise ResultError(_("Unknown outcome.")) from error
    if outcome not in PLAYED_OUTCOMES and outcome != Outcome.FORFEIT:
        raise ResultError(_("Unknown outcome."))
    parsed = parse_deals(deals)
    numbers = [raw.get("number", index) for index, raw in enumerate(deals)]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers) or (
        numbers != sorted(set(numbers))
    ):
        raise ResultError(_("The deals must be numbered in increasing order."))
    if numbers and numbers[-1] > MAX_DEAL_NUMBER:
        raise ResultError(_("A deal's number is at most %(max)d.") % {"max": MAX_DEAL_NUMBER})
    for deal, number in zip(parsed, numbers, strict=True):
        deal.number = number
    if (
        not isinstance(totals, list | tuple)
        or len(totals) != 2
        or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in totals)
    ):
        raise ResultError(_("The totals must be two whole numbers."))
    totals = (totals[0], totals[1])
    if winner_side not in (0, 1, None):
        raise ResultError(_("The result names no valid winner."))
    if outcome in OFFENCE_OUTCOMES and offender_side not in (0, 1):
        raise ResultError(_("Say which line timed out, abandoned or forfeited."))
    if outcome == Outcome.COMPLETED and offender_side is not None:
        raise ResultError(_("A completed match has no offending line."))
    if winner_side is None and outcome != Outcome.COMPLETED:
        raise ResultError(_("A timeout or abandon always has a winner."))
    if outcome == Outcome.FORFEIT and parsed:
        raise ResultError(_("A forfeited match has no deals."))
    if outcome != Outcome.FORFEIT and totals != tuple(
        sum(deal.points[side] for deal in parsed) for side in (0, 1)
    ):
        raise ResultError(_("The deals do not add up to the totals."))
    decision = Decision(
        totals,
        winner_side,
        match_end.margin(totals, winner_side),
        outcome,
        offender_side if outcome in OFFENCE_OUTCOMES else None,
        parsed,
    )
    # locked: no savepoint of its own; a refusal undoes the caller's whole transaction
    with transaction.atomic(savepoint=not locked):
        held = match if locked else _lock(match)
        _check_lines(held)
        if winner_side is None and _is_knockout(held):
            raise ResultError(_("A knock-out match cannot end level."))
        saved = _save_version(held, sheet=sheet_of(decision), source=ResultSource.IMPORT, user=None)
    _copy_state(held, match)
    return saved


def enter_result(match, deals, **kwargs):
    """:func:`save_result`, returning the match (its state copied from the stored one)."""
    save_result(match, deals, **kwargs)
    return match


def lock_matches(match_ids) -> dict[int, Match]:
    """Lock several matches in one query, in id order (two batches never deadlock), then read
    them with the rows :func:`apply_verified_result` reads; for ``locked=True`` callers."""
    ids = sorted(set(match_ids))
    # The lock first, in a statement of its own: a statement that waited for a lock reads the
    # other tables as they were when it began, so versions committed by the transaction it
    # waited for would be missing from what it read along with the match (a version number
    # used twice, a version in force that no longer is). The rows are read once held.
    list(
        Match.objects.select_for_update(of=("self",))
        .filter(pk__in=ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    versions = ResultVersion.objects.filter(match=OuterRef("pk")).order_by("-number")
    locked = _with_stages(
        # what ResultBatch.preload needs, in the same query
        Match.objects.annotate(
            last_version=Subquery(versions.values("number")[:1]),
            in_force_id=Subquery(
                versions.filter(status=ResultVersion.Status.IN_FORCE).values("pk")[:1]
            ),
        )
        .filter(pk__in=ids)
        .order_by("pk"),
        len(ids),
    )
    return {match.pk: match for match in locked}


# Up to this many matches are read with their stage, tournament and VP table joined in: one
# query less for a lone record. More matches, a batch's, share a few stages, read once each,
# rather than every match bringing its own copy of their JSON fields.
JOINED_STAGES_UP_TO = 4


def _with_stages(matches, count: int) -> list[Match]:
    """``matches`` (a query for ``count`` matches) read with their round, stage, tournament and
    VP table: joined in for a few matches, otherwise one stage object per stage, shared by its
    matches."""
    if count <= JOINED_STAGES_UP_TO:
        return list(matches.select_related("round__stage__tournament__vp_table"))
    matches = list(matches.select_related("round"))
    stages = Stage.objects.select_related("tournament__vp_table").in_bulk(
        {match.round.stage_id for match in matches}
    )
    # A stage deleted between the two reads (only possible unlocked, after a commit) takes its
    # matches with it: they are left out rather than failing the others.
    matches = [match for match in matches if match.round.stage_id in stages]
    for match in matches:
        match.round.stage = stages[match.round.stage_id]
    return matches


def apply_verified_result(match, verdict, *, user=None, source=None, submission=None, locked=False):
    """Store an engine verdict (``scopa.verify_document`` output) as a version of the
    match's result, with the precedence of :func:`_save_version`.

    Side 0 is the match's home line, side 1 the away line. ``source`` (e.g. a record id) is kept
    in the change log; ``submission`` links the version to the record it comes from.
    ``locked``: the caller's transaction already holds the match row lock, taken with
    :func:`lock_matches` (a batch of records locks its matches in one query).
    """
    # locked: the caller's transaction holds the lock and undoes this result if it fails (a
    # savepoint of its own, or, in a batch, nothing written before the flush); an atomic block
    # without a savepoint here would doom the caller's whole transaction on a refusal
    with nullcontext() if locked else transaction.atomic():
        held = match if locked else _lock(match)
        _check_lines(held)
        decision = decision_from_verdict(held, verdict)
        saved = _save_version(
            held,
            sheet=sheet_of(decision),
            source=ResultSource.RECORD,
            user=user,
            submission=submission,
            label=source or "engine",
        )
    _copy_state(held, match)
    return saved


def delete_result(
    match,
    *,
    user=None,
    reason="",
    based_on=UNCHECKED,
    source=ResultSource.DESK,
    reason_required=False,
):
    """Remove a match's result (a version with no sheet comes into force); refuse if a later
    knock-out match already has its own result."""
    with transaction.atomic():
        locked = _lock(match)
        if locked.round.stage.status == Stage.Status.CLOSED:
            raise ResultError(
                _("Stage “%(stage)s” is closed: its results are final.")
                % {"stage": locked.round.stage.name}
            )
        saved = _save_version(
            locked,
            sheet=None,
            source=source,
            user=user,
            based_on=based_on,
            reason=reason,
            reason_required=reason_required,
        )
    _copy_state(locked, match)
    return saved


def _decidable(version_id, *, based_on):
    """Lock the version's match and return (match, version, current); checks staleness."""
    match_id = ResultVersion.objects.filter(pk=version_id).values_list("match_id", flat=True)
    locked = _lock(Match(pk=match_id.get()))
    version = ResultVersion.objects.select_related("submission").get(pk=version_id)
    current = in_force(locked)
    if based_on is not UNCHECKED:
        seen = _based_on_number(based_on)
        if seen != (current.number if current else None):
            raise StaleResult(current)
    return locked, version, current


def accept_version(version, *, user=None, based_on=UNCHECKED, reason=""):
    """The organizer's (or referee's) decision: this version becomes the result in force.

    For a version awaiting a decision, and also to bring back a rejected or superseded one.
    """
    with transaction.atomic():
        locked, version, current = _decidable(version.pk, based_on=based_on)
        _check_lines(locked)
        if version.status == ResultVersion.Status.IN_FORCE:
            return SavedVersion(version, False)
        if version.is_removal:
            raise ResultError(_("A deletion cannot be brought back; delete the result again."))
        version.decided_by = user if getattr(user, "is_authenticated", False) else None
        version.decided_at = timezone.now()
        if reason:
            version.reason = reason
        _put_in_force(locked, version, current, user=user, action="result.accepted")
    return SavedVersion(version, True)


def reject_version(version, *, user=None, based_on=UNCHECKED, reason=""):
    """The organizer's (or referee's) decision: a version awaiting one does not come into
    force; the result in force stays as it is."""
    with transaction.atomic():
        locked, version, _current = _decidable(version.pk, based_on=based_on)
        if version.status == ResultVersion.Status.REJECTED:
            return SavedVersion(version, False)
        if version.status != ResultVersion.Status.AWAITING:
            raise ResultError(_("Only a version awaiting a decision can be rejected."))
        version.status = ResultVersion.Status.REJECTED
        version.decided_by = user if getattr(user, "is_authenticated", False) else None
        version.decided_at = timezone.now()
        if reason:
            version.reason = reason
        version.save(update_fields=["status", "decided_by", "decided_at", "reason"])
        _log(locked, "result.rejected", version, user=user)
    return SavedVersion(version, True)


# --------------------------------------------------------------------------- players' sheets
#
# At the table (``scoresheets``) one side types the match's sheet on its phone and the other
# countersigns it. The side's sheet is a version of source "players" that waits, PROPOSED, for
# the other side; signed by both it takes its place by the precedence of ``_place``; disputed
# or left unanswered it waits for the referee (AWAITING), who decides with ``accept_version`` /
# ``reject_version`` like on any other version.


def lock_match(match) -> Match:
    """The match row, locked until the end of the caller's transaction (always lock the match
    before any row that depends on it, as every writer of a result does)."""
    return _lock(match)


def entry_refusal(match) -> str:
    """Why no result can be entered on ``match`` now (a sentence), or ``""`` when it can: the
    one check of the desk's form and of the players' phones."""
    if match.round.stage.status == Stage.Status.CLOSED:
        return _("This stage is closed: its results are final and cannot be changed here.")
    if match.outcome == Outcome.BYE:
        return _("A bye has no result to enter.")
    if not (match.home_id and match.away_id):
        return _("Both lines of this match must be known first.")
    return ""


# Codes of the match-end rule that only say the sheet is not finished yet (more deals to type,
# a tie-break deal to play, the last capture to say), not that it is impossible.
_ONGOING = {
    "no_deals",
    "not_finished",
    "too_few_deals",
    "knockout_level",
    "tiebreak_level",
    "level_at_target",
    "level_when_time_ran_out",
    "last_capture_missing",
}


@dataclass
class SheetProgress:
    """A sheet as typed so far, as the referee reads it: running totals, whether the match is
    over (and who won), the sentence to show, and what the next deal must be."""

    totals: tuple[int, int]
    over: bool
    winner_side: int | None
    sentence: str
    next_tiebreak: bool = False
    needs_last_capture: bool = False
    deals: int = 0


def sheet_progress(match, deals, *, time_expired=False) -> SheetProgress:
    """Judge a sheet while it is typed (nothing is stored): the same referee as
    :func:`decide`; an impossible sheet raises ``ResultError`` with the referee's sentence,
    one that is only unfinished says what is missing."""
    parsed = parse_deals(deals)
    _referee(match, parsed, None)
    totals = (sum(d.points[0] for d in parsed), sum(d.points[1] for d in parsed))
    tournament = match.round.stage.tournament
    try:
        judged = match_end.judge_sheet(
            _end_rule(match),
            [
                match_end.SheetDeal(d.points, d.is_tiebreak, d.is_penalty, d.last_capture)
                for d in parsed
            ],
            time_expired=bool(time_expired and tournament.time_limit_s),
        )
    except match_end.SheetRefused as refusal:
        code = refusal.problem.code
        sentence = _match_end_message(refusal.problem)
        if code not in _ONGOING:
            raise ResultError(sentence) from refusal
        return SheetProgress(
            totals,
            False,
            None,
            sentence,
            next_tiebreak=code in ("knockout_level", "tiebreak_level"),
            needs_last_capture=code == "last_capture_missing",
            deals=len(parsed),
        )
    names = _side_names(match)
    if judged.winner is None:
        sentence = _("Match over: a draw, %(h)d–%(a)d.") % {"h": totals[0], "a": totals[1]}
    else:
        sentence = _("Match over: %(line)s wins %(h)d–%(a)d.") % {
            "line": names[judged.winner],
            "h": judged.totals[0],
            "a": judged.totals[1],
        }
    return SheetProgress(totals, True, judged.winner, sentence, deals=len(parsed))


def propose_result(match, deals, *, time_expired=False, based_on=UNCHECKED, user=None, label=None):
    """Check a side's sheet like :func:`save_result` and store it as a PROPOSED version of
    source "players": it waits for the other side, nothing comes into force. A stale
    ``based_on`` (another version came into force since the sheet was opened) raises
    :class:`StaleResult`."""
    parsed = parse_deals(deals)
    with transaction.atomic():
        locked = _lock(match)
        _check_lines(locked)
        decision = decide(locked, parsed, outcome=Outcome.COMPLETED, time_expired=time_expired)
        current = in_force(locked)
        seen = None if based_on is UNCHECKED else _based_on_number(based_on)
        if based_on is not UNCHECKED and seen != (current.number if current else None):
            raise StaleResult(current)
        last = ResultVersion.objects.filter(match=locked).aggregate(n=Max("number"))["n"] or 0
        version = ResultVersion.objects.create(
            match=locked,
            number=last + 1,
            source=str(ResultSource.PLAYERS),
            author=user if getattr(user, "is_authenticated", False) else None,
            based_on=current,
            sheet=sheet_of(decision, time_expired=time_expired),
            status=ResultVersion.Status.PROPOSED,
        )
        _log(locked, "result.proposed", version, user=user, label=label)
    return version


def countersign(version, *, user=None, label=None) -> SavedVersion:
    """Both sides signed a players' version: it takes its place by precedence (in force over no
    result, a deletion or the same result; otherwise it waits for the referee). ``created``
    says whether it came into force."""
    with transaction.atomic():
        locked, version, current = _decidable(version.pk, based_on=UNCHECKED)
        _check_lines(locked)
        if version.status == ResultVersion.Status.IN_FORCE:
            return SavedVersion(version, False)
        if version.status != ResultVersion.Status.PROPOSED:
            raise ResultError(_("This sheet no longer waits for the other side's signature."))
        _place(
            locked,
            version,
            current,
            user=user,
            label=label,
            action="result.countersigned",
            same_action="result.countersigned",
            countersigned=True,
        )
    return SavedVersion(version, version.status == ResultVersion.Status.IN_FORCE)


def refer_version(version, *, user=None, label=None, reason=""):
    """A players' version the other side disputed or left unanswered: it waits for the
    referee's decision (``accept_version`` / ``reject_version``)."""
    with transaction.atomic():
        locked, version, _current = _decidable(version.pk, based_on=UNCHECKED)
        if version.status != ResultVersion.Status.PROPOSED:
            return version
        version.status = ResultVersion.Status.AWAITING
        if reason:
            version.reason = reason
        version.save(update_fields=["status", "reason"])
        _log(locked, "result.awaiting", version, user=user, label=label, referred=True)
    return version


def withdraw_version(version, *, user=None, label=None, reason=""):
    """A players' version that no longer stands (its side corrected its sheet, or another
    result came into force first): rejected without a decision, nothing else changes."""
    with transaction.atomic():
        locked, version, _current = _decidable(version.pk, based_on=UNCHECKED)
        if version.status not in (ResultVersion.Status.PROPOSED, ResultVersion.Status.AWAITING):
            return version
        version.status = ResultVersion.Status.REJECTED
        if reason:
            version.reason = reason
        version.save(update_fields=["status", "reason"])
        _log(locked, "result.withdrawn", version, user=user, label=label)
    return version
