"""Clock checks: per-move time, a BankTime shared by a line for the whole match, a total per line.

A play's thinking time runs from the previous play of the same deal (or the deal's `start_ms`)
to its own `t_ms`; time between deals is not counted. A play that arrives after the move time
and the whole remaining BankTime, or past the line's total, shows a timeout nobody declared. A
declared timeout is confirmed when the outcome's `t_ms` is past the offender's remaining time.
"""

from msgspec import UNSET

from .errors import PlayError
from .record import MatchRecord
from .state import PLAYS_PER_DEAL
from .verdict import ClockFindings, DeclaredTimeout, LateMove


def check_clock(
    record: MatchRecord, side_count: int
) -> tuple[ClockFindings | None, list[PlayError]]:
    """(findings for the verdict, errors). Findings are None when the record has no clock data."""
    clock = record.clock
    if clock is None:
        return None, []
    seat_count = len(record.seats)
    move_ms = clock.move_s * 1000
    bank_left = [clock.bank_s * 1000] * side_count
    total_ms = None if not isinstance(clock.total_s, int | float) else clock.total_s * 1000
    used: list[float] = [0] * side_count
    checkable = True
    late: LateMove | None = None
    errors: list[PlayError] = []
    last_ref: int | None = None
    last_deal_open = False
    for d, deal in enumerate(record.deals):
        if deal.void:
            continue
        prev = deal.start_ms
        seat = (deal.dealer + 1) % seat_count
        for p, play in enumerate(deal.plays):
            if play.t_ms is None or prev is None or play.t_ms < prev:
                checkable = False
                if play.t_ms is not None and prev is not None:
                    # a time earlier than the play before: one of the two is wrong, so neither
                    # this play's nor the next play's thinking time is known
                    prev = None
                    seat = (seat + 1) % seat_count
                    continue
            else:
                think = play.t_ms - prev
                side = seat % side_count
                used[side] += think
                if think > move_ms:
                    bank_left[side] -= think - move_ms
                if late is None:
                    if bank_left[side] < 0:
                        late = LateMove(deal=d, play=p, seat=seat, side=side, kind="bank")
                    elif total_ms is not None and used[side] > total_ms:
                        late = LateMove(deal=d, play=p, seat=seat, side=side, kind="total")
            prev = play.t_ms
            seat = (seat + 1) % seat_count
        last_ref = prev
        last_deal_open = len(deal.plays) < PLAYS_PER_DEAL
    outcome = record.outcome
    declared: DeclaredTimeout | None = None
    if late is not None:
        kinds = {
            "bank": ("BankTime esaurito", "BankTime spent"),
            "total": ("tempo totale", "total time"),
        }
        kind_it, kind_en = kinds[late.kind]
        errors.append(
            PlayError(
                "undeclared_timeout",
                late.deal,
                late.play,
                seat=late.seat,
                kind_it=kind_it,
                kind_en=kind_en,
            )
        )
    if outcome.kind == "timeout" and outcome.seat is not UNSET:
        side = outcome.seat % side_count
        out_t = outcome.t_ms if isinstance(outcome.t_ms, int) else None
        if late is not None:
            declared = "preceded_by_undeclared"
        elif out_t is None or last_ref is None or not last_deal_open or not checkable:
            declared = "not_checkable"
        else:
            elapsed = out_t - last_ref
            # Past means strictly after, as for the plays above: a timeout declared exactly at
            # the limit is one the line still had time for.
            over_bank = elapsed - move_ms > bank_left[side]
            over_total = total_ms is not None and used[side] + elapsed > total_ms
            declared = "confirmed" if (over_bank or over_total) else "not_confirmed"
            if declared == "not_confirmed":
                last = len(record.deals) - 1
                errors.append(
                    PlayError(
                        "timeout_not_confirmed",
                        last,
                        len(record.deals[last].plays),
                        seat=outcome.seat,
                    )
                )
    findings = ClockFindings(
        move_s=clock.move_s,
        bank_s=clock.bank_s,
        total_s=total_ms / 1000 if total_ms is not None else None,
        checked=checkable,
        timeouts=[late] if late else [],
        declared_timeout=declared,
        bank_left_ms=[max(0, b) for b in bank_left],
        used_ms=used,
    )
    return findings, errors


def check_time_limit(
    record: MatchRecord, end_deal: int | None
) -> tuple[int | None, list[PlayError]]:
    """`end.time_limit_s` against the server times: the deal in which time ran out is the first
    deal still being played when the limit passed (a limit passing between two deals falls in the
    next one). Returns (expected deal or None, errors); nothing to say without timestamps."""
    limit_s = record.end.time_limit_s
    if not isinstance(limit_s, int | float):
        return None, []
    limit_ms = limit_s * 1000
    expected = None
    for d, deal in enumerate(record.deals):
        if deal.void:
            continue
        times = [play.t_ms for play in deal.plays if play.t_ms is not None]
        if not times or len(times) < len(deal.plays):
            return None, []
        if max(times) > limit_ms:  # a play exactly at the limit was still in time
            expected = d
            break
    time_up = record.outcome.time_up_in_deal
    declared = time_up if isinstance(time_up, int) else None
    if declared == expected:
        return expected, []
    if declared is None:
        if expected is None or end_deal is None or end_deal <= expected:
            return expected, []  # the match ended anyway in that deal
        return expected, [PlayError("time_up_mismatch", expected, None, expected=expected, got="-")]
    shown = "-" if expected is None else expected
    return expected, [PlayError("time_up_mismatch", declared, None, expected=shown, got=declared)]
