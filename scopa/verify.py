"""Replaying a whole match as a referee would: every play, every deal's points, the match end.

`verify` stops at the first illegality (a later play of an illegal match proves nothing) and
reports it with its position, a stable code and the sentence in Italian and English.
"""

import logging
from typing import Any

from msgspec import UNSET, UnsetType

from .cards import BIT, CARD_INDEX, RANK_OF
from .clock import check_clock, check_time_limit
from .errors import LANGS, PlayError, RecordError
from .match_end import DealTally, EndRule, MatchProgress, penalty_winner
from .match_end import margin as _margin
from .record import Deal, EndInput, MatchRecord, PlayInput, parse_record, sides_for
from .rules import Rules, check_take, is_ace_sweep, rules_for
from .scoring import categories, interrupted_deal, score_deal
from .state import PLAYS_PER_DEAL, DealState
from .verdict import (
    DealEntry,
    EndReason,
    MatchEnd,
    Mismatch,
    OutcomeSummary,
    Penalty,
    Verdict,
)

logger = logging.getLogger(__name__)


# A play error found by the hot loop: (code, play index, message parameters).
Problem = tuple[str, int, dict[str, Any]]


def replay_deal(
    rules: Rules, deal: Deal, d: int, seat_count: int, side_count: int
) -> tuple[DealState, PlayError | None]:
    """Replay one deal: (state, first PlayError or None); the caller checks missing plays."""
    state = DealState(rules, seat_count, side_count, deal.dealer, deal.deck)
    if deal.void:
        if not state.void:
            return state, PlayError("not_void", d, None, kings=state.table_kings)
        if deal.raw_plays:
            return state, PlayError("void_with_plays", d, 0)
        return state, None
    if state.void:
        return state, PlayError("must_be_void", d, None, kings=state.table_kings)
    problem = _fast_replay(rules, state, deal.raw_plays, seat_count, side_count)
    if problem is None:
        return state, None
    code, p, params = problem
    return state, PlayError(code, d, p, **params)


def _fast_replay(
    rules: Rules, state: DealState, plays: list[PlayInput], seat_count: int, side_count: int
) -> Problem | None:
    """The replay hot loop: DealState.apply and check_take inlined on local variables.

    Accepts exactly what check_take accepts (anything unusual, and every error, goes through
    check_take itself); the property tests compare both with legal_moves.
    """
    hands = state.hands
    table = state.table
    captured = state.captured
    scope = state.scope
    capture_count = state.capture_count
    last_capture_at = state.last_capture_at
    deck = state.deck
    rank_of = RANK_OF
    bit = BIT
    fifteen = rules.fifteen
    aces = rules.aces_take_all
    forced = rules.forced_capture
    round_size = state.round_size
    seat = state.to_move
    played = state.played
    deck_pos = state.deck_pos
    last_capturer = state.last_capturer
    first_seat = (state.dealer + 1) % seat_count
    dealing_order = [hands[(first_seat + i) % seat_count] for i in range(round_size)]
    side_of_seat = [seat_ % side_count for seat_ in range(seat_count)]
    last_play = PLAYS_PER_DEAL - 1
    card_index = CARD_INDEX
    card_of = CARD_INDEX.__getitem__
    unset = UNSET
    no_take: list[int] = []  # shared by every lay-down, never changed
    problem: Problem | None = None
    reach = 1  # bitset of sums of subsets of the table (bit 0: the empty set)
    for c in table:
        reach = (reach | reach << rank_of[c]) & 0xFFFF
    extra_at = None
    if len(plays) > PLAYS_PER_DEAL - played:
        extra_at = PLAYS_PER_DEAL - played
        plays = plays[:extra_at]
    round_left = round_size - played % round_size
    for p, play in enumerate(plays):
        # Each field read once: on a msgspec struct every attribute read is a lookup by name,
        # the largest cost of a play once the loop is compiled.
        named_seat = play.seat
        if named_seat is not unset and named_seat != seat:
            problem = ("wrong_seat", p, {"expected": seat, "got": named_seat})
            break
        card = card_index[play.card]
        hand = hands[seat]
        if card not in hand:
            problem = ("card_not_in_hand", p, {"card": card, "seat": seat})
            break
        take_codes = play.take
        take = [*map(card_of, take_codes)] if take_codes else no_take  # map: no comprehension frame
        rank = rank_of[card]
        legal = False
        sweep = False
        if not take:
            if fifteen:
                legal = not forced or not (reach >> (15 - rank) & 1)
            elif not (aces and rank == 1 and table):
                legal = not (reach >> rank & 1)
        elif len(take) == 1 and not fifteen:
            taken = take[0]
            legal = rank_of[taken] == rank and taken in table
        else:
            total = 0
            on_table = True
            for c in take:
                total += rank_of[c]
                if c not in table:
                    on_table = False
            if on_table and len(set(take)) == len(take):
                if fifteen:
                    legal = total + rank == 15
                elif aces and rank == 1:
                    legal = False  # ace rules: leave to check_take
                elif total == rank:
                    legal = True
                    for c in table:
                        if rank_of[c] == rank:
                            legal = False
                            break
        if not legal:
            found = check_take(rules, card, table, tuple(take))
            if found is not None:
                problem = (found[0], p, found[1])
                break
            sweep = aces and rank == 1 and bool(table) and is_ace_sweep(rules, card, table)
        hand.remove(card)
        if take:
            side = side_of_seat[seat]
            mask = bit[card]
            for c in take:
                table.remove(c)
                mask |= bit[c]
            # x[i] = x[i] + y rather than x[i] += y: the compiled loop then adds machine ints
            captured[side] = captured[side] | mask
            capture_count[side] = capture_count[side] + 1
            last_capturer = side
            last_capture_at[side] = played
            if not table and not sweep and played != last_play:
                scope[side] = scope[side] + 1
            reach = 1
            for c in table:
                reach = (reach | reach << rank_of[c]) & 0xFFFF
        else:
            table.append(card)
            reach = (reach | reach << rank) & 0xFFFF
        played += 1
        seat += 1
        if seat == seat_count:
            seat = 0
        round_left -= 1
        if not round_left:
            round_left = round_size
            if played <= last_play:
                for hand_ in dealing_order:
                    hand_.append(deck[deck_pos])
                    deck_pos += 1
    if problem is None and extra_at is not None:
        problem = ("extra_plays", extra_at, {})
    state.played = played
    state.to_move = seat
    state.deck_pos = deck_pos
    state.last_capturer = last_capturer
    if played == PLAYS_PER_DEAL:
        state._finish()
    return problem


def match_end_for(
    end: EndInput, time_up: int | UnsetType, knockout: bool, side_count: int, fifteen: bool
) -> MatchProgress:
    """The engine's one match-end rule (`match_end.py`) for a record's `end` and outcome."""
    rule = EndRule(
        target=None if end.target is UNSET else end.target,
        deals=None if end.deals is UNSET else end.deals,
        knockout=knockout,
        sides=side_count,
        no_capture_loses=fifteen,
    )
    return MatchProgress(rule, None if time_up is UNSET else time_up)


def deal_tally(state: DealState, points: list[int]) -> DealTally:
    """What the match-end rule reads of a replayed deal."""
    return DealTally(
        tuple(points),
        tuple(count > 0 for count in state.capture_count),
        tuple(state.last_capture_at),
    )


# The deal a timeout or abandon stopped, and the point units it had not yet decided.
OpenDeal = tuple[int, list[tuple[str, int]]]


def _apply_penalty(
    entries: list[DealEntry],
    open_deal: OpenDeal | None,
    offender_side: int,
    side_count: int,
    totals: list[int],
) -> Penalty:
    """Timeout or abandon: each opponent of the offender gets every unsecured point of the deal in
    progress plus one scopa. The points go into that deal's entry (a match without an unfinished
    deal puts the extra scopa on its last deal) so the deals always add up to the totals."""
    unsecured = open_deal[1] if open_deal else []
    entry: DealEntry | None
    if open_deal is not None:
        entry = entries[-1]
    else:
        entry = next((e for e in reversed(entries) if not e.void), None)
    if entry is None:
        entry = DealEntry(  # no deal was played: an entry of its own, so deals add up to totals
            points=[0] * side_count,
            breakdown=[{} for _ in range(side_count)],
            tiebreak=False,
            void=False,
            penalty_only=True,
        )
        entries.append(entry)
    points = [0] * side_count
    for side in range(side_count):
        if side == offender_side:
            continue
        breakdown = entry.breakdown[side]
        for category, value in unsecured:
            breakdown[category] = breakdown.get(category, 0) + value
            points[side] += value
        breakdown["scope"] = breakdown.get("scope", 0) + 1
        points[side] += 1
        entry.points[side] += points[side]
        totals[side] += points[side]
    entry.penalty = True
    return Penalty(
        deal=open_deal[0] if open_deal else None,
        offender_side=offender_side,
        unsecured=[category for category, _ in unsecured],
        extra_scopa=1,
        points=points,
    )


def verify(record: MatchRecord, lang: str = "it") -> Verdict:
    """Replay `record` and score it; never raises on a parsed record's content."""
    rules = rules_for(record.variant, record.options)
    seat_count = len(record.seats)
    side_count = sides_for(seat_count)
    outcome = record.outcome
    interrupted = outcome.kind in ("timeout", "abandon")
    offender_seat = outcome.seat if interrupted and outcome.seat is not UNSET else None
    offender_side = None if offender_seat is None else offender_seat % side_count
    match = match_end_for(
        record.end, outcome.time_up_in_deal, record.knockout, side_count, rules.fifteen
    )
    totals = match.totals
    entries: list[DealEntry] = []
    errors: list[PlayError] = []
    mismatches: list[Mismatch] = []
    open_deal: OpenDeal | None = None
    penalty: Penalty | None = None
    expected_dealer: int | None = None
    deals = record.deals
    last = len(deals) - 1
    interrupted_open = False
    for d, deal in enumerate(deals):
        if match.over:
            reason_it, reason_en = match.reasons()
            errors.append(
                PlayError("extra_deals", d, None, reason_it=reason_it, reason_en=reason_en)
            )
            break
        if expected_dealer is not None and deal.dealer != expected_dealer:
            errors.append(
                PlayError("wrong_dealer", d, None, expected=expected_dealer, got=deal.dealer)
            )
            break
        state, error = replay_deal(rules, deal, d, seat_count, side_count)
        if error is not None:
            errors.append(error)
            break
        tiebreak = match.phase == "tiebreak"
        if deal.void:
            expected_dealer = deal.dealer
            zero = [0] * side_count
            empty = [dict.fromkeys(categories(rules), 0) for _ in zero]
            entries.append(DealEntry(points=zero, breakdown=empty, tiebreak=False, void=True))
            if deal.declared is not None and deal.declared != zero:
                mismatches.append(Mismatch(deal=d, declared=deal.declared, verified=zero))
            continue
        expected_dealer = (deal.dealer + 1) % seat_count
        if not state.finished:
            if not (interrupted and d == last):
                errors.append(PlayError("missing_plays", d, state.played, seat=state.to_move))
                break
            if outcome.kind == "timeout" and offender_seat != state.to_move:
                errors.append(
                    PlayError(
                        "timeout_not_on_turn",
                        d,
                        state.played,
                        seat=offender_seat,
                        expected=state.to_move,
                    )
                )
                break
            points, breakdown, unsecured = interrupted_deal(
                rules, state.captured, state.scope, state.loose_mask()
            )
            interrupted_open = True
            open_deal = (d, unsecured)
            entry = DealEntry(
                points=points,
                breakdown=breakdown,
                tiebreak=tiebreak,
                void=False,
                interrupted=True,
            )
        else:
            points, breakdown = score_deal(rules, state.captured, state.scope)
            entry = DealEntry(points=points, breakdown=breakdown, tiebreak=tiebreak, void=False)
        if state.dealer_fifteen:
            entry.dealer_fifteen = state.dealer_fifteen
        entries.append(entry)
        for s in range(side_count):
            totals[s] += points[s]
        if deal.declared is not None and not interrupted_open and deal.declared != points:
            mismatches.append(Mismatch(deal=d, declared=deal.declared, verified=points))
        if not interrupted_open:
            match.after_deal(d, deal_tally(state, points))

    winner = match.winner
    end_reason = match.reason
    if not errors:
        if offender_side is not None:  # a timeout or abandon
            if match.over:
                reason_it, reason_en = match.reasons()
                errors.append(
                    PlayError(
                        "outcome_after_end",
                        len(deals),
                        None,
                        reason_it=reason_it,
                        reason_en=reason_en,
                    )
                )
            else:
                penalty = _apply_penalty(entries, open_deal, offender_side, side_count, totals)
                declared = None if penalty.deal is None else deals[penalty.deal].declared
                if penalty.deal is not None and declared is not None:
                    verified = entries[-1].points
                    if declared != verified:
                        mismatches.append(
                            Mismatch(deal=penalty.deal, declared=declared, verified=verified)
                        )
                winner = penalty_winner(totals, offender_side)
                end_reason = EndReason(outcome.kind)
                match.end_deal = last if last >= 0 else None
        elif not match.over:
            reason_it, reason_en = match.reasons()
            errors.append(
                PlayError(
                    "missing_deals", len(deals), None, reason_it=reason_it, reason_en=reason_en
                )
            )
    clock_findings, clock_errors = check_clock(record, side_count)
    if record.end.time_limit_s is not UNSET:
        _, limit_errors = check_time_limit(record, match.end_deal if not errors else None)
        clock_errors += limit_errors
    if clock_errors:
        errors = sorted(
            errors + clock_errors, key=lambda e: (e.deal, -1 if e.play is None else e.play)
        )
    valid = not errors
    if not valid:
        winner = None
    outcome_summary = OutcomeSummary(kind=outcome.kind, seat=offender_seat, side=offender_side)
    if match.time_up is not None:
        outcome_summary.time_up_in_deal = match.time_up
    return Verdict(
        valid=valid,
        errors=errors,
        deals=entries,
        totals=list(totals),
        winner=winner,
        margin=_margin(totals, winner) if valid else 0,
        declared_mismatches=mismatches,
        outcome=outcome_summary,
        sides=side_count,
        seats=list(record.seats),
        end=MatchEnd(reason=end_reason if valid else None, deal=match.end_deal if valid else None),
        penalty=penalty,
        clock=clock_findings,
        lang=lang,
    )


def malformed_document(error: RecordError, lang: str = "it") -> dict[str, Any]:
    """The CLI's answer for an unreadable record."""
    return {"valid": False, "malformed": True, "errors": [error.as_dict(lang)]}


def verify_document(data: bytes | str | dict[str, Any], lang: str = "it") -> dict[str, Any]:
    """Parse and verify; never raises. Exactly the JSON object the CLI prints for this record."""
    lang = lang if lang in LANGS else "it"
    try:
        record = parse_record(data)
    except RecordError as error:
        return malformed_document(error, lang)
    try:
        return verify(record, lang).as_dict(lang)
    except Exception:  # a verifier bug must not take down a worker; say so in the answer
        logger.exception("verifier failed on a readable record")
        internal = RecordError("unreadable", "$", detail="internal verifier error")
        return malformed_document(internal, lang)
