"""Danish, Swiss and Mitchell stages, paired one round at a time from the standings.

A stage of these kinds has ONE group holding every line that plays in it (so the standings,
pages and export that read groups work unchanged); a line's ``position`` is its start number
(round-1 order; for Mitchell also its seat: odd positions North-South, even East-West). Each
"pair the next round" reads the standings after the last round (with ``carry_over``, over the
earlier Danish/Swiss/Mitchell stages too), calls ``tournaments.algorithms`` and saves the round.

Entries during the event: a check-in list before round 1 (when any line is checked in, only
checked-in lines are drawn); lines entered late join at the next pairing up to the stage's
``late_entry_until_round``, with the bye score for each round they missed; a withdrawn line
(``Entry.withdrawn``) is left out from the next pairing on (Mitchell: its opponent sits out with
a bye). A bye is a match without opponent, part of the draw: its score is a result version from
the ``bye`` source written by ``tournaments.services.results.save_bye``.

A result of an earlier round that changes once a later round is paired flags that later round
(``Round.needs_review``); the organizer keeps it or pairs it again while it has no result.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.dispatch import receiver
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from tournaments.algorithms import danish, mitchell, qualification, swiss
from tournaments.algorithms import standings as standings_algo
from tournaments.exceptions import ClubsApartError, PairingError, ResultError
from tournaments.models import (
    PAIRED_BY_ROUND,
    Entry,
    ForbiddenPairing,
    Group,
    GroupMember,
    Line,
    Match,
    MatchResult,
    Outcome,
    Round,
    Stage,
)
from tournaments.services import changelog, results
from tournaments.services.entries import withdrawn_line_ids
from tournaments.services.stages import counted_stages
from tournaments.services.standings import played_matches
from tournaments.signals import results_changed

logger = logging.getLogger(__name__)

OPEN_GROUP_NAME = "A"


@dataclass(frozen=True)
class OpenStanding:
    """A line's place in the standings that pair the next round."""

    line_id: int
    rank: int
    vp: int
    played: int
    byes: int


# --------------------------------------------------------------------------- reading


def chain_stages(stage) -> list[Stage]:
    """The stages whose rounds count for this stage's pairing: itself and, with ``carry_over``,
    the Danish/Swiss/Mitchell stages right before it (a Mitchell stage counts only itself).
    The rule is ``stages.counted_stages`` (the desk says it in words from the same function)."""
    earlier = list(Stage.objects.filter(tournament_id=stage.tournament_id, order__lt=stage.order))
    return counted_stages(stage, earlier)


def _chain_rows(stages):
    """Done matches (values) and their results over ``stages``, with a running round number
    across the stages so the progressive score and the Swiss history follow the play order."""
    stage_ids = [s.pk for s in stages]
    offset = {}
    running = 0
    for s in stages:
        offset[s.pk] = running
        running += Round.objects.filter(stage=s).count()
    matches = list(
        Match.objects.filter(round__stage_id__in=stage_ids, status=Match.Status.DONE).values(
            "id",
            "home_id",
            "away_id",
            "winner_id",
            "outcome",
            "round__number",
            "round__stage_id",
        )
    )
    for match in matches:
        match["round__number"] += offset[match["round__stage_id"]]
    rows = list(
        MatchResult.objects.filter(match__round__stage_id__in=stage_ids).values(
            "match_id", "line_id", "points", "vp", "mp"
        )
    )
    return matches, rows


def open_group(stage) -> Group | None:
    return Group.objects.filter(stage=stage).order_by("order").first()


def open_standings(stage, line_ids=None) -> list[OpenStanding]:
    """The standings that pair the next round of ``stage`` (best first), over its chain."""
    stages = chain_stages(stage)
    group = open_group(stage)
    if line_ids is None:
        line_ids = (
            list(group.members.order_by("position").values_list("line_id", flat=True))
            if group
            else []
        )
    matches, match_results = _chain_rows(stages)
    known = set(line_ids)
    played = [
        m
        for m in played_matches(matches, match_results)
        if m.home in known and (m.away is None or m.away in known)
    ]
    tournament = stage.tournament
    tiebreaks = [
        standings_algo.TieBreak(tb)
        for tb in (stage.stage_tiebreaks or tournament.tiebreaks or [])
        if tb != standings_algo.TieBreak.RATING
    ]
    rows = standings_algo.rank_group(
        list(line_ids), played, tiebreaks, lots_seed=tournament.lots_seed
    )
    byes: dict[int, int] = defaultdict(int)
    for match in played:
        if match.away is None:
            byes[match.home] += 1
    return [
        OpenStanding(row.line_id, index, row.vp, row.played, byes[row.line_id])
        for index, row in enumerate(rows, start=1)
    ]


def _met_pairs(stages) -> set[frozenset[int]]:
    pairs = Match.objects.filter(
        round__stage__in=stages, home__isnull=False, away__isnull=False
    ).values_list("home_id", "away_id")
    return {frozenset(pair) for pair in pairs}


def _pairing_byes(stages) -> dict[int, int]:
    """Byes given by the draw (a late entry's missed rounds are not byes of the draw)."""
    joined = {
        (m["group__stage_id"], m["line_id"]): m["joined_round"]
        for m in GroupMember.objects.filter(group__stage__in=stages).values(
            "group__stage_id", "line_id", "joined_round"
        )
    }
    counts: dict[int, int] = defaultdict(int)
    for home_id, stage_id, number in Match.objects.filter(
        round__stage__in=stages, outcome=Outcome.BYE, away__isnull=True, home__isnull=False
    ).values_list("home_id", "round__stage_id", "round__number"):
        if number >= joined.get((stage_id, home_id), 1):
            counts[home_id] += 1
    return counts


# --------------------------------------------------------------------------- writing


def _save_bye(stage, round_row, group, line_id, *, user=None, table=None):
    """A bye is a match without opponent whose score the results service writes (source
    ``bye``), so its version, change log and projection come from the one writer."""
    match = Match.objects.create(
        round=round_row,
        group=group,
        home_id=line_id,
        away=None,
        outcome=Outcome.BYE,
        table_number=table,
    )
    try:
        results.save_bye(match, user=user)
    except ResultError as error:  # a bye worth a forfeit win needs a usable VP table
        raise PairingError(error.message) from error
    return match


def _active_entries(tournament):
    entries = list(
        Entry.objects.filter(tournament=tournament, withdrawn=False)
        .select_related("line")
        .order_by(F("seed").asc(nulls_last=True), "id")
    )
    if any(entry.checked_in for entry in entries):
        entries = [entry for entry in entries if entry.checked_in]
    return entries


def _start_order(stage, line_ids):
    """Round-1 order: the standings of the earlier stages (carry-over), else seed or draw."""
    stages = chain_stages(stage)
    if len(stages) > 1:
        previous = stages[-2]
        ranked = [row.line_id for row in open_standings(previous, line_ids)]
        return ranked
    if stage.first_round == Stage.FirstRound.RANDOM:
        order = sorted(line_ids)
        random.Random(f"{stage.draw_seed}:{stage.pk}").shuffle(order)
        return order
    return list(line_ids)


def _clubs(stage, line_ids) -> dict[int, str]:
    """Each line's club key, when the stage keeps clubs apart (else none)."""
    if not stage.keep_clubs_apart:
        return {}
    rows = Line.objects.filter(pk__in=list(line_ids)).values_list("pk", "club")
    return {pk: mitchell.club_key(club) for pk, club in rows if mitchell.club_key(club)}


def forbidden_pairs(tournament) -> set[frozenset[int]]:
    """The pairings the organizer forbids in ``tournament``."""
    return {
        frozenset(pair)
        for pair in ForbiddenPairing.objects.filter(tournament=tournament).values_list(
            "line_a_id", "line_b_id"
        )
    }


def _apart_message(stage, seating, line_ids) -> str:
    """Why the Mitchell movement cannot keep every club apart, for the organizer."""
    names: dict[str, str] = {}
    for club in Line.objects.filter(pk__in=list(line_ids)).values_list("club", flat=True):
        names.setdefault(mitchell.club_key(club), " ".join(club.split()))
    holds = mitchell.table_count(len(line_ids))
    parts = []
    if seating.oversized:
        parts.append(
            ngettext(
                "The club %(clubs)s has more lines than a direction holds (%(size)d).",
                "The clubs %(clubs)s have more lines than a direction holds (%(size)d).",
                len(seating.oversized),
            )
            % {"clubs": ", ".join(names.get(c, c) for c in seating.oversized), "size": holds}
        )
    else:
        parts.append(
            _(
                "The clubs and the forbidden pairings cannot be split into two directions of "
                "%(ns)d and %(ew)d lines."
            )
            % {"ns": holds, "ew": len(line_ids) - holds}
        )
    if seating.forbidden_meetings:
        parts.append(
            ngettext(
                "Seated with the fewest meetings, %(n)d forbidden pairing meets.",
                "Seated with the fewest meetings, %(n)d forbidden pairings meet.",
                len(seating.forbidden_meetings),
            )
            % {"n": len(seating.forbidden_meetings)}
        )
    if seating.club_meetings:
        parts.append(
            ngettext(
                "Seated with the fewest meetings, %(n)d pair of club-mates meets.",
                "Seated with the fewest meetings, %(n)d pairs of club-mates meet.",
                len(seating.club_meetings),
            )
            % {"n": len(seating.club_meetings)}
        )
    parts.append(_("Pair anyway to seat the lines so, or change the clubs and pairings."))
    return " ".join(parts)


def _mitchell_apart(stage, order, *, accept_meetings):
    """The start order of a Mitchell stage with its clubs and forbidden pairings apart."""
    clubs = _clubs(stage, order)
    forbidden = forbidden_pairs(stage.tournament)
    if not clubs and not forbidden:
        return order
    seating = mitchell.seat_apart(order, clubs, forbidden, rounds=stage.rounds_planned)
    if not seating.apart and not accept_meetings:
        raise ClubsApartError(
            _apart_message(stage, seating, order),
            meetings=len(seating.club_meetings) + len(seating.forbidden_meetings),
        )
    return seating.order


def _ensure_group(stage, user, *, accept_meetings=False):
    group = open_group(stage)
    if group is not None:
        return group
    entries = _active_entries(stage.tournament)
    line_ids = [entry.line_id for entry in entries]
    if len(line_ids) < 2:
        raise PairingError(_("At least two lines must be present to pair round 1."))
    order = _start_order(stage, line_ids)
    if stage.kind == Stage.Kind.MITCHELL:
        order = _mitchell_apart(stage, order, accept_meetings=accept_meetings)
    group = Group.objects.create(stage=stage, name=OPEN_GROUP_NAME, order=0)
    GroupMember.objects.bulk_create(
        GroupMember(group=group, line_id=line_id, position=position)
        for position, line_id in enumerate(order, start=1)
    )
    changelog.record(
        stage.tournament,
        "stage.lines_drawn",
        user=user,
        stage=stage.pk,
        lines=len(order),
        checked_in=len(entries) < Entry.objects.filter(tournament=stage.tournament).count(),
    )
    return group


def mitchell_meeting(tournament, line_a, line_b) -> tuple[Stage, int] | None:
    """A Mitchell stage of ``tournament`` already seated (round 1 paired, not closed) where
    ``line_a`` and ``line_b`` sit in opposite directions, and the first round not yet paired in
    which its movement makes them meet, or ``None``: its seats are set, so a pairing forbidden
    now could no longer keep them apart."""
    if {line_a, line_b} & withdrawn_line_ids(tournament.pk):
        return None  # a withdrawn line plays no more rounds
    stages = Stage.objects.filter(tournament=tournament, kind=Stage.Kind.MITCHELL).exclude(
        status=Stage.Status.CLOSED
    )
    for stage in stages.order_by("order", "pk"):
        group = open_group(stage)
        last = Round.objects.filter(stage=stage).order_by("-number").first()
        if group is None or last is None:
            continue
        order = list(group.members.order_by("position").values_list("line_id", flat=True))
        if line_a not in order or line_b not in order:
            continue
        rounds = stage.rounds_planned or mitchell.table_count(len(order))
        for number in range(last.number + 1, rounds + 1):
            try:
                tables = mitchell.mitchell_round(order, number, rounds=rounds)
            except ValueError:  # a movement that cannot go on: the pairing says so
                return None
            if any({table.ns, table.ew} == {line_a, line_b} for table in tables):
                return stage, number
    return None


def _late_mitchell_check(stage, group, late_line, next_number, *, accept_meetings):
    """A late pair takes the empty East-West seat, the only free one: refused with
    :class:`ClubsApartError` when there it would meet, in the rounds left, a line it must never
    meet or (with the stage's option) a line of its own club, unless ``accept_meetings`` (the
    organizer has read which). With one seat free, that seat is the fewest meetings there are."""
    order = [*group.members.order_by("position").values_list("line_id", flat=True), late_line]
    rounds = stage.rounds_planned or mitchell.table_count(len(order))
    if next_number > rounds:
        return
    withdrawn = withdrawn_line_ids(stage.tournament_id)
    opponents = []
    for number in range(next_number, rounds + 1):
        for table in mitchell.mitchell_round(order, number, rounds=rounds):
            if table.ew == late_line and table.ns not in withdrawn:
                opponents.append(table.ns)
    forbidden = {
        line
        for pair in forbidden_pairs(stage.tournament)
        if late_line in pair
        for line in pair - {late_line}
    }
    clubs = _clubs(stage, [*opponents, late_line])
    own_club = clubs.get(late_line)
    names = dict(Line.objects.filter(pk__in=[*opponents, late_line]).values_list("pk", "name"))
    meetings = []
    for line in opponents:
        if line in forbidden:
            meetings.append(_("%(line)s (a pairing you forbid)") % {"line": names.get(line, line)})
        elif own_club and clubs.get(line) == own_club:
            meetings.append(_("%(line)s (of its club)") % {"line": names.get(line, line)})
    if not meetings or accept_meetings:
        return
    raise ClubsApartError(
        " ".join(
            (
                _(
                    "The late line “%(line)s” can only take the empty East-West seat of the "
                    "movement, and there it meets %(meetings)s."
                )
                % {"line": names.get(late_line, late_line), "meetings": ", ".join(meetings)},
                _("Pair anyway to seat it there, or withdraw the late entry."),
            )
        ),
        meetings=len(meetings),
        late=True,
    )


def _add_late_entries(stage, group, next_number, user, *, accept_meetings=False):
    """Late entries join the next round, with the bye score for each round they missed.

    With the check-in list in use, a late line joins once it is checked in. A Mitchell movement
    takes one late pair, and only into the empty East-West seat of a movement with an odd
    number of lines (it then meets the North-South lines that seat would have faced); anything
    else would change the movement under the lines already playing it, so it is refused. That
    seat keeps apart what round 1 keeps apart (``_late_mitchell_check``)."""
    if stage.late_entry_until_round is None or next_number > stage.late_entry_until_round:
        return []
    members = set(group.members.values_list("line_id", flat=True))
    late = [
        entry.line_id for entry in _active_entries(stage.tournament) if entry.line_id not in members
    ]
    if not late:
        return []
    if stage.kind == Stage.Kind.MITCHELL and (len(members) % 2 == 0 or len(late) > 1):
        raise PairingError(
            ngettext(
                "The Mitchell movement has no free seat for the late line: a late pair can "
                "only take the empty East-West seat of a movement with an odd number of lines. "
                "Withdraw the late entry to pair the round.",
                "The Mitchell movement has no free seats for %(n)d late lines: a late pair "
                "can only take the empty East-West seat of a movement with an odd number of "
                "lines. Withdraw the late entries to pair the round.",
                len(late),
            )
            % {"n": len(late)}
        )
    if stage.kind == Stage.Kind.MITCHELL:
        _late_mitchell_check(stage, group, late[0], next_number, accept_meetings=accept_meetings)
    last_position = max(group.members.values_list("position", flat=True), default=0)
    GroupMember.objects.bulk_create(
        GroupMember(
            group=group, line_id=line_id, position=last_position + index, joined_round=next_number
        )
        for index, line_id in enumerate(late, start=1)
    )
    for round_row in Round.objects.filter(stage=stage, number__lt=next_number):
        for line_id in late:
            _save_bye(stage, round_row, group, line_id, user=user)
    changelog.record(
        stage.tournament,
        "stage.late_entries",
        user=user,
        stage=stage.pk,
        lines=late,
        round=next_number,
    )
    return late


def _playing(group):
    withdrawn = withdrawn_line_ids(group.stage.tournament_id)
    return [m.line_id for m in group.members.order_by("position") if m.line_id not in withdrawn]


def _swiss_pairs(stage, group, playing, next_number):
    if len(playing) > swiss.MAX_LINES:
        raise PairingError(
            _(
                "A Swiss stage pairs at most %(max)d lines (this one has %(n)d): the FIDE Dutch "
                "engine would take minutes per round. Use Danish rounds for a larger open."
            )
            % {"max": swiss.MAX_LINES, "n": len(playing)}
        )
    stages = chain_stages(stage)
    standings = open_standings(stage, [m.line_id for m in group.members.order_by("position")])
    start_numbers = {m.line_id: m.position for m in group.members.all()}
    joined = {
        (m["group__stage_id"], m["line_id"]): m["joined_round"]
        for m in GroupMember.objects.filter(group__stage__in=stages).values(
            "group__stage_id", "line_id", "joined_round"
        )
    }
    rounds = []
    for s in stages:
        # the rounds played before this one: the round being paired (already created, still
        # empty) is not one of them, or the engine would read round 1 as round 2
        earlier = Round.objects.filter(stage=s)
        if s.pk == stage.pk:
            earlier = earlier.filter(number__lt=next_number)
        for round_row in earlier.order_by("number"):
            pairs = []
            byes = []
            vp: dict[int, float] = defaultdict(float)
            for match in round_row.matches.prefetch_related("results"):
                if match.home_id is None:
                    continue
                if match.away_id is None:
                    # a late entry's missed round scores like a bye but is not one of the
                    # draw's: the line may still get the draw's bye later (as in Danish)
                    if round_row.number >= joined.get((s.pk, match.home_id), 1):
                        byes.append(match.home_id)
                else:
                    pairs.append((match.home_id, match.away_id))
                for result in match.results.all():
                    vp[result.line_id] += result.vp
            rounds.append(swiss.PlayedRound(pairs=pairs, byes=byes, vp=dict(vp)))
    order = sorted(start_numbers, key=lambda line: start_numbers[line])
    known = set(order)
    rounds = [
        swiss.PlayedRound(
            pairs=[p for p in r.pairs if p[0] in known and p[1] in known],
            byes=[b for b in r.byes if b in known],
            vp={k: v for k, v in r.vp.items() if k in known},
        )
        for r in rounds
    ]
    lines, played = swiss.line_histories(order, rounds)
    by_id = {line.id: line for line in lines}
    scores = {row.line_id: row.vp for row in standings}
    for line in lines:
        if scores.get(line.id) != line.score:  # our standings and the library's input agree
            logger.warning("swiss: line %s score %s vs standings %s", line.id, line.score, scores)
    present = [by_id[line_id] for line_id in playing]
    try:
        bye_vp, _mp, _won = results.bye_score(stage)
    except ResultError as error:
        raise PairingError(error.message) from error
    try:
        swiss_round = swiss.pair_swiss(
            present,
            played,
            round_number=len(rounds) + 1,
            # the last round relaxes the colour rules: only a round the stage says is its last
            total_rounds=len(rounds) + (stage.rounds_planned or next_number + 1) - next_number + 1,
            bye_score=float(bye_vp),
            forbidden=forbidden_pairs(stage.tournament),
            clubs=_clubs(stage, playing),
        )
    except swiss.ForbiddenInRound as error:
        raise PairingError(
            _(
                "No Swiss pairing of this round keeps apart every pairing you forbid: remove "
                "one from the list of forbidden pairings to pair the round."
            )
        ) from error
    except swiss.NoLegalRound as error:
        raise PairingError(
            _("No Swiss pairing avoids every rematch: the stage has more rounds than it can pair.")
        ) from error
    if swiss_round.club_meetings:
        logger.info(
            "stage %s: no Swiss round keeps every club apart, %d club meetings",
            stage.pk,
            len(swiss_round.club_meetings),
        )
    return swiss_round.pairs, swiss_round.bye


def _danish_pairs(stage, group, playing, next_number):
    stages = chain_stages(stage)
    clubs = _clubs(stage, playing)
    forbidden = forbidden_pairs(stage.tournament)
    try:
        if next_number == 1 and len(stages) == 1:
            pairing = danish.first_round(playing, clubs=clubs, forbidden=forbidden)
        else:
            standings = open_standings(stage, [m.line_id for m in group.members.all()])
            present = set(playing)
            order = [row.line_id for row in standings if row.line_id in present]
            pairing = danish.pair_danish(
                order, _met_pairs(stages), _pairing_byes(stages), clubs=clubs, forbidden=forbidden
            )
    except danish.NoLegalPairing as error:
        raise PairingError(
            _(
                "Every pairing of this round makes a pairing you forbid: remove one from the "
                "list of forbidden pairings to pair the round."
            )
        ) from error
    return pairing.pairs, pairing.bye


def _mitchell_tables(stage, group, playing, next_number):
    order = list(group.members.order_by("position").values_list("line_id", flat=True))
    rounds = stage.rounds_planned or mitchell.table_count(len(order))
    try:
        tables = mitchell.mitchell_round(
            order, next_number, rounds=rounds, arrow_switch=stage.arrow_switch
        )
    except ValueError as error:
        raise PairingError(
            _("A Mitchell movement of %(tables)d tables has at most %(tables)d rounds.")
            % {"tables": mitchell.table_count(len(order))}
        ) from error
    present = set(playing)
    result = []
    for table in tables:
        home, away = table.home, table.away
        if home not in present:
            home = None
        if away not in present:
            away = None
        result.append((table.table, home, away))
    return result


@transaction.atomic
def pair_next_round(stage, *, user=None, accept_meetings=False) -> Round:
    """Pair and save the next round of a Danish, Swiss or Mitchell stage.

    A Mitchell stage that cannot keep its clubs and forbidden pairings apart (in round 1, or in
    the empty seat a late pair takes) is refused with :class:`ClubsApartError`, unless
    ``accept_meetings`` (the organizer has read why): then its lines are seated with the fewest
    meetings."""
    stage = Stage.objects.select_for_update().select_related("tournament").get(pk=stage.pk)
    if stage.kind not in PAIRED_BY_ROUND:
        raise PairingError(_("Only Danish, Swiss and Mitchell stages are paired round by round."))
    if stage.status == Stage.Status.CLOSED:
        raise PairingError(_("Stage “%(stage)s” is closed.") % {"stage": stage.name})
    last = Round.objects.filter(stage=stage).order_by("-number").first()
    if last is not None:
        pending = Match.objects.filter(round=last).exclude(status=Match.Status.DONE).count()
        if pending:
            raise PairingError(
                _("Round %(number)d still has matches without a result.") % {"number": last.number}
            )
    else:
        for earlier in chain_stages(stage)[:-1]:
            if (
                Match.objects.filter(round__stage=earlier)
                .exclude(status=Match.Status.DONE)
                .exists()
            ):
                raise PairingError(
                    _("Stage “%(stage)s” still has matches without a result.")
                    % {"stage": earlier.name}
                )
    next_number = last.number + 1 if last else 1
    if stage.rounds_planned and next_number > stage.rounds_planned:
        raise PairingError(
            _("All %(n)d rounds of “%(stage)s” are paired.")
            % {"n": stage.rounds_planned, "stage": stage.name}
        )
    group = _ensure_group(stage, user, accept_meetings=accept_meetings)
    late = _add_late_entries(stage, group, next_number, user, accept_meetings=accept_meetings)
    playing = _playing(group)
    if len(playing) < 2:
        raise PairingError(_("At least two lines must be present to pair round 1."))
    round_row = Round.objects.create(stage=stage, number=next_number)
    matches = []
    if stage.kind == Stage.Kind.MITCHELL:
        for table, home, away in _mitchell_tables(stage, group, playing, next_number):
            if home is None and away is None:
                continue
            if home is None or away is None:
                _save_bye(stage, round_row, group, home or away, user=user, table=table)
                continue
            matches.append(
                Match(round=round_row, group=group, home_id=home, away_id=away, table_number=table)
            )
    else:
        if stage.kind == Stage.Kind.SWISS:
            pairs, bye = _swiss_pairs(stage, group, playing, next_number)
        else:
            pairs, bye = _danish_pairs(stage, group, playing, next_number)
        for table, (home, away) in enumerate(pairs, start=1):
            matches.append(
                Match(round=round_row, group=group, home_id=home, away_id=away, table_number=table)
            )
        if bye is not None:
            _save_bye(stage, round_row, group, bye, user=user)
    Match.objects.bulk_create(matches, batch_size=500)
    if stage.status == Stage.Status.PENDING:
        stage.status = Stage.Status.RUNNING
        stage.save(update_fields=["status"])
    changelog.record(
        stage.tournament,
        "round.paired",
        user=user,
        stage=stage.pk,
        round=next_number,
        kind=str(stage.kind),
        matches=len(matches),
        late_entries=late,
    )
    logger.info("stage %s: round %d paired, %d matches", stage.pk, next_number, len(matches))
    return round_row


def missing_from_round(round_row) -> list[Entry]:
    """The lines due to play (not withdrawn; checked in when the check-in list is in use) that
    have no seat in ``round_row``, neither at a table nor with a bye: the desk names them
    before the round is published (a late entry past the stage's last round for late entries,
    a line ticked after its stage's draw)."""
    if round_row.stage.kind not in PAIRED_BY_ROUND:
        return []
    seated: set[int | None] = set()
    for home_id, away_id in Match.objects.filter(round=round_row).values_list("home_id", "away_id"):
        seated.update((home_id, away_id))
    entries = _active_entries(round_row.stage.tournament)
    return [entry for entry in entries if entry.line_id not in seated]


def club_meetings(round_row) -> list[tuple[str, str]]:
    """The club-mates who meet in ``round_row`` when its stage keeps clubs apart (a Danish or
    Swiss round that no pairing could keep apart, a Mitchell seated with the fewest meetings),
    as (home name, away name): the desk names them once the round is paired."""
    if not round_row.stage.keep_clubs_apart:
        return []
    rows = Match.objects.filter(
        round=round_row, home__isnull=False, away__isnull=False
    ).values_list("home__name", "home__club", "away__name", "away__club")
    return [
        (home, away)
        for home, home_club, away, away_club in rows
        if mitchell.club_key(home_club)
        and mitchell.club_key(home_club) == mitchell.club_key(away_club)
    ]


@dataclass(frozen=True)
class LateJoiner:
    """A late entry that plays its first round in a given round, and the bye score it got for
    each round it missed (``missed``: ``(round number, VP)``)."""

    line_id: int
    name: str
    missed: list[tuple[int, int]]

    @property
    def missed_vp(self) -> int:
        return sum(vp for _number, vp in self.missed)


def late_joiners(round_row) -> list[LateJoiner]:
    """The late entries whose first round is ``round_row``, for its round sheet."""
    if round_row.stage.kind not in PAIRED_BY_ROUND:
        return []
    members = list(
        GroupMember.objects.filter(
            group__stage_id=round_row.stage_id, joined_round=round_row.number
        )
        .select_related("line")
        .order_by("position")
    )
    if not members:
        return []
    missed: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for line_id, number, vp in (
        MatchResult.objects.filter(
            match__round__stage_id=round_row.stage_id,
            match__round__number__lt=round_row.number,
            match__outcome=Outcome.BYE,
            line_id__in=[m.line_id for m in members],
        )
        .order_by("match__round__number")
        .values_list("line_id", "match__round__number", "vp")
    ):
        missed[line_id].append((number, vp))
    return [LateJoiner(m.line_id, m.line.name, missed[m.line_id]) for m in members]


def _round_has_results(round_row) -> bool:
    return (
        MatchResult.objects.filter(match__round=round_row)
        .exclude(match__outcome=Outcome.BYE)
        .exists()
    )


@transaction.atomic
def repair_round(round_row, *, user=None) -> Round:
    """Throw away an unplayed round and pair it again from the corrected standings."""
    round_row = Round.objects.select_for_update().select_related("stage").get(pk=round_row.pk)
    stage = round_row.stage
    if Round.objects.filter(stage=stage, number__gt=round_row.number).exists():
        raise PairingError(_("Only the last round of a stage can be paired again."))
    if _round_has_results(round_row):
        raise PairingError(
            _("Round %(number)d already has results: it can no longer be paired again.")
            % {"number": round_row.number}
        )
    number = round_row.number
    Match.objects.filter(round=round_row).delete()
    round_row.delete()
    changelog.record(stage.tournament, "round.unpaired", user=user, stage=stage.pk, round=number)
    return pair_next_round(stage, user=user)


@transaction.atomic
def keep_round(round_row, *, user=None) -> Round:
    """The organizer keeps a flagged round as paired."""
    Round.objects.filter(pk=round_row.pk).update(needs_review=False)
    round_row.needs_review = False
    changelog.record(
        round_row.stage.tournament,
        "round.kept",
        user=user,
        stage=round_row.stage_id,
        round=round_row.number,
    )
    return round_row


@receiver(results_changed, dispatch_uid="tournaments.services.pairing.flag")
def flag_later_rounds(sender, matches, **kwargs):
    """Results of earlier rounds changed: flag the rounds paired after them."""
    seen = set()
    for match in matches:
        if match.round_id not in seen:
            seen.add(match.round_id)
            _flag_rounds_after(match)


def _flag_rounds_after(match):
    round_row = match.round
    stage = round_row.stage
    if stage.kind not in PAIRED_BY_ROUND:
        return
    flagged = 0
    if stage.kind != Stage.Kind.MITCHELL:
        # a Mitchell movement does not read the standings: its later rounds stay as they are
        flagged = Round.objects.filter(stage=stage, number__gt=round_row.number).update(
            needs_review=True
        )
    later = Stage.objects.filter(
        tournament_id=stage.tournament_id, order__gt=stage.order, kind__in=PAIRED_BY_ROUND
    )
    for later_stage in later:
        if stage in chain_stages(later_stage):
            flagged += Round.objects.filter(stage=later_stage).update(needs_review=True)
    if flagged:
        changelog.record(
            stage.tournament,
            "round.flagged",
            match=match,
            stage=stage.pk,
            round=round_row.number,
        )


# --------------------------------------------------------------------------- check-in, cards


def set_check_in(tournament, line_ids, *, user=None) -> int:
    """Mark the present lines (the check-in list before round 1); the others are absent."""
    line_ids = set(line_ids)
    entries = list(Entry.objects.filter(tournament=tournament))
    changed = []
    for entry in entries:
        present = entry.line_id in line_ids
        if entry.checked_in != present:
            entry.checked_in = present
            changed.append(entry)
    Entry.objects.bulk_update(changed, ["checked_in"])
    changelog.record(
        tournament, "entries.checked_in", user=user, present=sorted(line_ids), changed=len(changed)
    )
    return len([e for e in entries if e.line_id in line_ids])


@dataclass(frozen=True)
class NextSeat:
    """Where a line plays next in a Mitchell stage (for the table card)."""

    table: int
    direction: mitchell.Direction


def mitchell_next_seats(stage, round_number) -> dict[int, NextSeat]:
    """Each line's seat in the round after ``round_number`` (none after the last round)."""
    group = open_group(stage)
    if group is None:
        return {}
    order = list(group.members.order_by("position").values_list("line_id", flat=True))
    n_tables = mitchell.table_count(len(order))
    rounds = stage.rounds_planned or n_tables
    if round_number >= rounds:
        return {}
    seats = mitchell.directions(order)
    return {
        line: NextSeat(
            mitchell.seat_in_round(seat, round_number + 1, n_tables).table, seat.direction
        )
        for line, seat in seats.items()
    }


def line_directions(stage) -> dict[int, mitchell.Direction]:
    group = open_group(stage)
    if group is None:
        return {}
    order = list(group.members.order_by("position").values_list("line_id", flat=True))
    return {line: seat.direction for line, seat in mitchell.directions(order).items()}


def open_seeds(stage, count) -> list[int]:
    """The ``count`` lines of a Danish/Swiss/Mitchell stage that seed a knock-out, best first:
    its top lines, with the places the stage keeps for categories given to each category's
    best lines (``algorithms.qualification``)."""
    withdrawn = withdrawn_line_ids(stage.tournament_id)
    # a line withdrawn before the next stage starts is left out of its draw
    rows = [row for row in open_standings(stage) if row.line_id not in withdrawn]
    if len(rows) < count:
        raise PairingError(
            _("Stage “%(stage)s” has fewer than %(n)d lines.") % {"stage": stage.name, "n": count}
        )
    return going_on(stage, [row.line_id for row in rows], count)


def going_on(stage, ranked_ids: list[int], count: int) -> list[int]:
    """Which of ``ranked_ids`` (best first) go on when ``count`` lines do, in ranking order."""
    kept = stage.category_places or {}
    if not kept:
        return ranked_ids[:count]
    category_of = dict(
        Entry.objects.filter(tournament_id=stage.tournament_id).values_list("line_id", "category")
    )
    ranked = [(line_id, category_of.get(line_id, "")) for line_id in ranked_ids]
    try:
        return qualification.qualifiers(ranked, count, kept)
    except qualification.KeptPlacesError:
        raise PairingError(
            _("%(kept)d places are kept for categories, more than the %(n)d lines going on.")
            % {"kept": sum(kept.values()), "n": count}
        ) from None
