"""The batch writer: results written together (a group of verified records) share their row
writes, flushed once, and are announced once (``results_written`` inside the transaction,
``results_changed`` after the commit). A result written alone goes through the same path.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple, Protocol, cast

from django.db import transaction
from django.db.models import Max, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from tournaments.algorithms import vp as vp_algo
from tournaments.models import (
    ChangeLog,
    Match,
    MatchResult,
    ResultVersion,
    Stage,
)
from tournaments.services import changelog, rows
from tournaments.signals import results_changed, results_written

logger = logging.getLogger(__name__)


def _lock(match: Match) -> Match:
    return (
        Match.objects.select_for_update(of=("self",))
        .select_related("round__stage__tournament__vp_table", "home", "away")
        .get(pk=match.pk)
    )


def held_lock(match: Match | None) -> Match | None:
    """``match`` when the caller says it locked it (``lock_match``) and a transaction is open
    to hold that lock, else None (the writer then locks it itself): a players' step locks the
    match first and need not have it read and locked again by each writer it calls."""
    return match if match is not None and transaction.get_connection().in_atomic_block else None


class _Numbered(Protocol):
    """A match as :func:`lock_matches` reads it: annotated with the number of its last version
    and the id of its version in force (``None`` for none)."""

    pk: int
    last_version: int | None
    in_force_id: int | None


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
        # byes of the draw: written for the webhooks, no ``results_changed`` (see _announce)
        self.written_only: list[int] = []
        # the announced matches as the writer left them (locked until the commit)
        self.written: dict[int, Match] = {}
        self.vp_tables: dict[int, vp_algo.VPTable] = {}
        self._current: dict[int, ResultVersion | None] = {}
        self._last: dict[int, int] = {}
        self._versions: list[ResultVersion] = []
        self._superseded: list[ResultVersion] = []
        self._scores: list[ScoreRow] = []
        self._matches: list[Match] = []
        # ids of the matches with rows in _matches or _versions (pending() is asked per record)
        self._pending: set[int] = set()
        self._logs: list[ChangeLog] = []

    def preload(self, matches: Iterable[Match]) -> None:
        """Read the last version numbers and the versions in force of ``matches``; matches
        read by :func:`lock_matches` bring both numbers along, and only versions in force
        are read then (a fresh match costs no query)."""
        matches = [m for m in matches if m.pk not in self._last]
        if not matches:
            return
        ids = [m.pk for m in matches]
        self._current.update(dict.fromkeys(ids))
        if all(hasattr(m, "last_version") for m in matches):
            numbered = cast("list[_Numbered]", matches)
            self._last.update({m.pk: m.last_version or 0 for m in numbered})
            in_force = [m.in_force_id for m in numbered if m.in_force_id is not None]
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

    def knows(self, match: Match) -> bool:
        return match.pk in self._last

    def current(self, match: Match) -> ResultVersion | None:
        return self._current[match.pk]

    def last_number(self, match: Match) -> int:
        return self._last[match.pk]

    def remember(self, version: ResultVersion) -> None:
        if version.match_id not in self._last:
            return
        self._last[version.match_id] = max(self._last[version.match_id], version.number)
        if version.status == ResultVersion.Status.IN_FORCE:
            self._current[version.match_id] = version

    def pending(self, match: Match) -> bool:
        """Rows of ``match`` wait for the flush (its projection, or a version of it)."""
        return match.pk in self._pending

    def must_flush_before(self, match: Match) -> bool:
        # pending: its version may wait alone (a record waiting for a decision projects nothing)
        return self.pending(match) or (bool(self._matches) and _linked(match))

    def writes_now(self, match: Match) -> bool:
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
        later = held.keys() & {match.next_match_id, match.loser_next_match_id}
        if later:
            held.update(lock_matches(later))

    def mark(self) -> tuple[int, ...]:
        return tuple(len(gathered) for gathered in self._gathered())

    def _gathered(self) -> tuple[list[Any], ...]:
        return (
            self.announce,
            self.written_only,
            self._versions,
            self._superseded,
            self._scores,
            self._matches,
            self._logs,
        )

    def undo(self, mark: tuple[int, ...], match: Match) -> None:
        """Forget what was gathered since ``mark`` (the result of ``match`` was rolled back)."""
        for gathered, length in zip(self._gathered(), mark, strict=True):
            del gathered[length:]
        self._pending = {m.pk for m in self._matches} | {v.match_id for v in self._versions}
        self._last.pop(match.pk, None)
        self._current.pop(match.pk, None)
        # what lock_matches read along with the match may predate the batch's flushes
        for name in ("last_version", "in_force_id"):
            match.__dict__.pop(name, None)

    def defer_version(
        self, version: ResultVersion, superseded: ResultVersion | None = None
    ) -> None:
        """A new version (and the one it puts out of force), inserted by :meth:`flush`."""
        if superseded is not None:
            self._superseded.append(superseded)
        self._versions.append(version)
        self._pending.add(version.match_id)

    def defer(self, match: Match, scores: Iterable[ScoreRow]) -> None:
        """A match's projection: its score rows as ``SCORE_COLUMNS`` tuples, and the match row."""
        self._scores.extend(scores)
        match.updated_at = timezone.now()  # the batch update_each applies no auto_now
        self._matches.append(match)
        self._pending.add(match.pk)

    def defer_log(self, entry: ChangeLog) -> None:
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
        for gathered in self._gathered()[2:]:  # the announcements wait for the end of the batch
            gathered.clear()
        self._pending.clear()


_batch: ContextVar[ResultBatch | None] = ContextVar("result_batch", default=None)


def _linked(match: Match) -> bool:
    """A knock-out match whose result moves lines into later matches."""
    return match.next_match_id is not None or match.loser_next_match_id is not None


def send_results_changed(
    match_ids: Iterable[int], *, written: Iterable[Match] | None = None
) -> None:
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
    if announce and (batch.announce or batch.written_only):
        announced = list(dict.fromkeys(batch.announce))
        written = [batch.written[pk] for pk in announced]
        results_written.send(
            sender=Match, match_ids=list(dict.fromkeys(announced + batch.written_only))
        )
        if announced:
            transaction.on_commit(lambda: send_results_changed(announced, written=written))


def _announce(match: Match, *, changed: bool = True) -> None:
    """Announce a result written: ``results_written`` in the transaction and, when ``changed``
    (not for a bye of the draw), ``results_changed`` after the commit."""
    batch = _batch.get()
    if batch is not None:
        if changed:
            batch.announce.append(match.pk)
            batch.written[match.pk] = match
        else:
            batch.written_only.append(match.pk)
        return
    match_id = match.pk
    results_written.send(sender=Match, match_ids=[match_id])
    if changed:
        transaction.on_commit(lambda: send_results_changed([match_id]))


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


def lock_matches(match_ids: Iterable[int]) -> dict[int, Match]:
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


def _with_stages(matches: QuerySet[Match], count: int) -> list[Match]:
    """``matches`` (a query for ``count`` matches) read with their round, stage, tournament and
    VP table: joined in for a few matches, otherwise one stage object per stage, shared by its
    matches."""
    if count <= JOINED_STAGES_UP_TO:
        return list(matches.select_related("round__stage__tournament__vp_table"))
    read = list(matches.select_related("round"))
    stages = Stage.objects.select_related("tournament__vp_table").in_bulk(
        {match.round.stage_id for match in read}
    )
    # A stage deleted between the two reads (only possible unlocked, after a commit) takes its
    # matches with it: they are left out rather than failing the others.
    kept = [match for match in read if match.round.stage_id in stages]
    for match in kept:
        match.round.stage = stages[match.round.stage_id]
    return kept
