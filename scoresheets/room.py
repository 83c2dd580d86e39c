"""The room at a glance: where each table of a round stands (the desk's room view).

``room_states`` is the ONE place that turns the players' reports (``TableReport``), the result
versions (in force, awaiting a decision) and the match status into a table's state; the room
page, its counts and anything else that shows the room read it from here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from scoresheets.models import PrivateLink, TableReport
from tournaments.models import Match, ResultVersion

logger = logging.getLogger(__name__)


class RoomState(models.TextChoices):
    """A table's state as the room sees it, in the order a match goes through them."""

    WAITING = "waiting", _("Waiting")
    ENTERING = "entering", _("Being entered")
    AWAITING = "awaiting", _("Awaiting the other side")
    DISPUTED = "disputed", _("Disputed or not answered in time")
    IN_FORCE = "in_force", _("In force")


class Detail(models.TextChoices):
    """Why a table is for the referee (the state ``DISPUTED`` gathers three cases)."""

    NONE = "", ""
    DISPUTED = "disputed", _("disputed by the other side")
    EXPIRED = "expired", _("not answered in time")
    DECISION = "decision", _("a result waits for a decision")
    REFERRED = "referred", _("sent to the referee")


@dataclass
class TableState:
    """One table of a round: who plays there and where its result stands."""

    match_id: int
    table_number: int | None
    home: str
    away: str
    state: RoomState
    detail: Detail = Detail.NONE
    since: datetime | None = None
    """When the table entered its state (the report's last change), if known."""
    overdue: bool = False
    """Awaiting the other side for longer than the tournament's time to countersign."""
    comment: str = ""
    """The other side's comment when it disputed the sheet."""
    report_id: int | None = None
    sides: tuple[str, ...] = field(default_factory=tuple)
    """The sides ("home", "away") that have a report open (draft or awaiting)."""
    referee_url: str = ""
    """Filled in by the page for the tables the referee has to look at."""
    last_contact: datetime | None = None
    """When a phone of this table's lines last reached the server (any of their links)."""
    typed_deals: int = 0
    """Deals of the draft the server holds (what a phone sent while checking the sheet)."""

    @property
    def on_a_phone(self) -> bool:
        """No sheet reached the server yet: the result is still being typed, or waits on a
        phone without a network (the director chases these before closing the round)."""
        return self.state in (RoomState.WAITING, RoomState.ENTERING)

    @property
    def for_referee(self) -> bool:
        return self.state == RoomState.DISPUTED

    @property
    def label(self) -> str:
        return str(RoomState(self.state).label)


def _current_reports(match_ids) -> dict[int, list[TableReport]]:
    """The reports that still speak for each match, newest first (superseded ones are history)."""
    reports: dict[int, list[TableReport]] = {}
    rows = (
        TableReport.objects.filter(match_id__in=match_ids)
        .exclude(state=TableReport.State.SUPERSEDED)
        .order_by("match_id", "-updated_at", "-pk")
    )
    for report in rows:
        reports.setdefault(report.match_id, []).append(report)
    return reports


def _versions(match_ids) -> tuple[dict[int, int], dict[int, set[int]]]:
    """The version in force of each match that has a result, and its awaiting versions."""
    in_force: dict[int, int] = {}
    awaiting: dict[int, set[int]] = {}
    rows = ResultVersion.objects.filter(
        match_id__in=match_ids,
        status__in=[ResultVersion.Status.IN_FORCE, ResultVersion.Status.AWAITING],
    ).values_list("pk", "match_id", "status", "sheet__isnull")
    for pk, match_id, status, removal in rows:
        if status == ResultVersion.Status.IN_FORCE:
            if not removal:
                in_force[match_id] = pk
        else:
            awaiting.setdefault(match_id, set()).add(pk)
    return in_force, awaiting


def _awaiting_report(open_reports, in_force):
    """The report waiting for the other side's answer, unless a result from elsewhere (the
    desk, a platform) is in force: then that result stands and the report is only history."""
    for report in open_reports:
        if report.state != TableReport.State.AWAITING:
            continue
        if in_force is None or in_force == report.version_id:
            return report
    return None


def _state_of(match, reports, in_force, awaiting, countersign, now) -> TableState:
    """``in_force``: the id of the match's version in force (``None``: no result)."""
    state = TableState(
        match_id=match.pk,
        table_number=match.table_number,
        home=match.home.name,
        away=match.away.name,
        state=RoomState.WAITING,
    )
    open_reports = [r for r in reports if r.state in TableReport.OPEN_STATES]
    state.sides = tuple(sorted({r.side for r in open_reports}))
    referee = next((r for r in reports if r.state in TableReport.FOR_REFEREE), None)
    # An awaiting version that is not the sheet of an open report waits for the referee
    # (a platform's record against the desk's result, a correction); an open report's own
    # version only waits for the other side.
    open_versions = {r.version_id for r in open_reports if r.version_id}
    undecided = awaiting - open_versions
    if referee is not None:
        state.state = RoomState.DISPUTED
        state.detail = {
            TableReport.State.EXPIRED: Detail.EXPIRED,
            TableReport.State.REFERRED: Detail.REFERRED,
        }.get(referee.state, Detail.DISPUTED)
        state.since = referee.answered_at or referee.updated_at
        state.comment = referee.answer_comment
        state.report_id = referee.pk
    elif undecided:
        state.state = RoomState.DISPUTED
        state.detail = Detail.DECISION
    elif (waiting := _awaiting_report(open_reports, in_force)) is not None:
        state.state = RoomState.AWAITING
        state.since = waiting.submitted_at or waiting.updated_at
        state.report_id = waiting.pk
        state.overdue = state.since is not None and now - state.since > countersign
    elif in_force is not None or match.status == Match.Status.DONE:
        state.state = RoomState.IN_FORCE
    elif open_reports or match.status == Match.Status.IN_PROGRESS:
        state.state = RoomState.ENTERING
        if open_reports:
            state.since = open_reports[0].updated_at
            state.report_id = open_reports[0].pk
    drafts = [r for r in open_reports if r.state == TableReport.State.DRAFT]
    state.typed_deals = max((len(r.deals or []) for r in drafts), default=0)
    return state


def _last_contacts(round_, matches) -> dict[int, datetime]:
    """The last contact of each match's phones: the latest of its lines' links (the lines'
    own cards, and the table cards of this match)."""
    lines = {line for m in matches for line in (m.home_id, m.away_id)}
    rows = PrivateLink.objects.filter(
        tournament_id=round_.stage.tournament_id, line_id__in=lines, last_seen_at__isnull=False
    ).values_list("line_id", "match_id", "last_seen_at")
    latest: dict[tuple[int, int | None], datetime] = {}
    for line_id, match_id, seen_at in rows:
        key = (line_id, match_id)  # match None: the line's own card
        if seen_at is not None and (key not in latest or latest[key] < seen_at):
            latest[key] = seen_at
    found: dict[int, datetime] = {}
    for m in matches:
        contacts = [
            latest[key]
            for line in (m.home_id, m.away_id)
            for key in ((line, None), (line, m.pk))
            if key in latest
        ]
        if contacts:
            found[m.pk] = max(contacts)
    return found


def room_states(round_, *, now: datetime | None = None) -> list[TableState]:
    """Every table of ``round_`` with two lines, by table number, and where its result stands.

    Byes and knock-out slots still waiting for a line have no table and are left out.
    """
    now = now or timezone.now()
    matches = list(
        Match.objects.filter(round=round_, home__isnull=False, away__isnull=False)
        .select_related("home", "away")
        .order_by("table_number", "pk")
    )
    ids = [m.pk for m in matches]
    reports = _current_reports(ids)
    in_force, awaiting = _versions(ids)
    tournament = round_.stage.tournament
    countersign = timedelta(minutes=tournament.countersign_minutes)
    contacts = _last_contacts(round_, matches)
    states = [
        _state_of(
            m,
            reports.get(m.pk, []),
            in_force.get(m.pk),
            awaiting.get(m.pk, set()),
            countersign,
            now,
        )
        for m in matches
    ]
    for table in states:
        table.last_contact = contacts.get(table.match_id)
    return states


def counts(states: list[TableState]) -> list[tuple[RoomState, int]]:
    """How many tables are in each state, every state listed (zero included), in room order."""
    tally = {state: 0 for state in RoomState}
    for table in states:
        tally[RoomState(table.state)] += 1
    return list(tally.items())


def referee_first(states: list[TableState]) -> list[TableState]:
    """The tables for the referee first, then the others, each by table number."""
    return sorted(states, key=lambda t: (not t.for_referee, t.table_number or 0, t.match_id))
