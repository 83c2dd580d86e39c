"""Match end rules, knock-out tie-breaks, timeouts and abandons, clock checks."""

import pytest

from scopa import verify_document
from scopa.match_end import DealTally, EndRule, MatchProgress

from .helpers import clone, sim


def progress(target=None, deals=None, time_up=None, knockout=False, sides=2):
    return MatchProgress(
        EndRule(target=target, deals=deals, knockout=knockout, sides=sides), time_up
    )


def fake_state(last_capture_at):
    return last_capture_at


def play(match, d, points, last_capture_at=None):
    last = tuple(last_capture_at or [0] * len(points))
    match.add_deal(d, DealTally(tuple(points), None, last))


class TestTarget:
    def test_reaching_the_target_strictly_ahead_wins(self):
        match = progress(target=11)
        play(match, 0, [6, 4])
        assert not match.over
        play(match, 1, [5, 3])
        assert match.over and match.winner == 0 and match.reason == "target"

    def test_tied_at_or_above_the_target_plays_on(self):
        match = progress(target=11)
        play(match, 0, [11, 11])
        assert not match.over
        play(match, 1, [1, 2])
        assert match.winner == 1

    def test_three_sides_tied_leaders_play_on(self):
        match = progress(target=11, sides=3)
        play(match, 0, [12, 12, 3])
        assert not match.over
        play(match, 1, [0, 1, 9])
        assert match.winner == 1


class TestDealsAndKnockout:
    def test_number_of_deals_and_draw(self):
        match = progress(deals=2)
        play(match, 0, [3, 4])
        play(match, 1, [4, 3])
        assert match.over and match.winner is None and match.reason == "draw"

    def test_knockout_tie_break_deal_won_on_its_own_points(self):
        match = progress(deals=1, knockout=True)
        play(match, 0, [4, 4])
        assert match.phase == "tiebreak" and not match.over
        play(match, 1, [3, 2])
        assert match.over and match.winner == 0 and match.reason == "tiebreak"

    def test_third_tied_tie_break_last_capturer_loses(self):
        match = progress(deals=1, knockout=True)
        play(match, 0, [4, 4])
        play(match, 1, [2, 2])
        play(match, 2, [3, 3])
        assert not match.over
        play(match, 3, [2, 2], fake_state([30, 34]))  # side 1 made the last capture
        assert match.over and match.winner == 0 and match.reason == "tiebreak_last_capture"

    def test_last_capture_rule_even_without_points(self):
        match = progress(deals=1, knockout=True)
        for d in range(3):
            play(match, d, [1, 1])
        play(match, 3, [0, 0], fake_state([None, 12]))  # side 0 never captured
        assert match.winner == 0


def test_three_sides_knockout_only_tied_leaders_play_tie_breaks():
    match = progress(deals=1, knockout=True, sides=3)
    play(match, 0, [5, 5, 2])
    assert match.phase == "tiebreak" and match.contenders == [0, 1]
    play(match, 1, [1, 1, 4])  # side 2 scores most but is not a contender
    assert not match.over and match.contenders == [0, 1]
    play(match, 2, [0, 3, 0])
    assert match.winner == 1


def test_three_contenders_after_the_third_tie_break():
    match = progress(deals=1, knockout=True, sides=3)
    for d in range(4):
        play(match, d, [2, 2, 2], fake_state([20, 33, 35]))
    assert match.over and match.winner == 0


class TestTimeLimit:
    def test_time_up_deal_is_finished_and_the_side_ahead_wins(self):
        match = progress(target=21, time_up=1)
        play(match, 0, [5, 3])
        assert not match.over
        play(match, 1, [2, 2])
        assert match.over and match.winner == 0 and match.reason == "time_limit"

    def test_tied_at_time_up_plays_on(self):
        match = progress(target=21, time_up=0)
        play(match, 0, [3, 3])
        assert not match.over
        play(match, 1, [0, 1])
        assert match.winner == 1

    def test_knockout_tied_at_time_up_goes_to_the_tie_break_deals(self):
        """docs/match-record.md, "End of the match" (seed 000, "Parità"): no playing on in a
        knock-out, not even when time is up. The old rule played further regular deals, so deal 1
        counted in the totals."""
        match = progress(target=21, time_up=0, knockout=True)
        play(match, 0, [3, 3])
        assert not match.over and match.phase == "tiebreak" and match.contenders == [0, 1]
        play(match, 1, [0, 1])
        assert match.over and match.winner == 1 and match.reason == "tiebreak"
        assert match.regular_deals == 1 and match.tiebreaks == 1

    def test_time_limit_record_verifies(self):
        doc = sim(seed=2, end={"target": 21, "time_limit_s": 600})
        verdict = verify_document(doc)
        assert verdict["valid"], verdict["errors"]
        assert doc["outcome"].get("time_up_in_deal") is not None
        assert verdict["end"]["reason"] in ("time_limit", "target")


def test_time_up_deal_checked_against_server_times():
    clock = {"move_s": 20, "bank_s": 60, "total_s": 1800}
    doc = sim(seed=3, end={"target": 21, "time_limit_s": 400}, clock=clock)
    declared = doc["outcome"]["time_up_in_deal"]
    assert verify_document(doc)["valid"]
    wrong = clone(doc)
    wrong["outcome"]["time_up_in_deal"] = declared + 1
    error = verify_document(wrong)["errors"][0]
    assert error["code"] in ("time_up_mismatch", "extra_deals", "missing_deals")
    undeclared = clone(doc)
    del undeclared["outcome"]["time_up_in_deal"]
    codes = [e["code"] for e in verify_document(undeclared)["errors"]]
    assert codes and set(codes) <= {"time_up_mismatch", "missing_deals"}


def test_scopa_15_side_without_captures_loses():
    match = MatchProgress(EndRule(target=21, no_capture_loses=True))
    match.totals[:] = [10, 12]
    match.after_deal(3, DealTally((4, 0), (True, False), (5, None)))
    assert match.over and match.winner == 0 and match.reason == "no_capture"


def test_simulated_knockout_tie_breaks_are_marked():
    found = 0
    for seed in range(60):
        doc = sim(seed=seed, end={"deals": 1}, knockout=True)
        verdict = verify_document(doc)
        assert verdict["valid"], verdict["errors"]
        flags = [d["tiebreak"] for d in verdict["deals"] if not d["void"]]
        assert flags[0] is False and verdict["winner"] is not None
        if any(flags):
            found += 1
            assert verdict["end"]["reason"].startswith("tiebreak")
            assert len([f for f in flags if f]) <= 3
    assert found


class TestTimeoutAndAbandon:
    @pytest.mark.parametrize("seats", [2, 3, 4])
    def test_offender_loses_opponents_get_unsecured_points_and_a_scopa(self, seats):
        doc = sim(seed=8, seats=seats, outcome={"kind": "abandon", "seat": 0, "deal": 1, "play": 7})
        verdict = verify_document(doc)
        assert verdict["valid"], verdict["errors"]
        penalty = verdict["penalty"]
        assert penalty["offender_side"] == 0 and verdict["winner"] != 0
        assert verdict["outcome"] == {"kind": "abandon", "seat": 0, "side": 0}
        interrupted = verdict["deals"][-1]
        assert interrupted["interrupted"] and interrupted["penalty"]
        for side in range(1, verdict["sides"]):
            assert penalty["points"][side] == 1 + sum(
                {"carte": 1, "denari": 1, "settebello": 1, "primiera": 1}[c]
                for c in penalty["unsecured"]
            )
        assert [sum(d["points"][s] for d in verdict["deals"]) for s in range(verdict["sides"])] == (
            verdict["totals"]
        )

    def test_offender_still_ahead_gives_margin_zero(self):
        for seed in range(40):
            doc = sim(seed=seed, outcome={"kind": "abandon", "seat": 0, "deal": 3, "play": 30})
            verdict = verify_document(doc)
            assert verdict["valid"]
            totals = verdict["totals"]
            if totals[0] >= totals[1]:
                assert verdict["winner"] == 1 and verdict["margin"] == 0
                return
        pytest.skip("no seed with the offender ahead")

    def test_timeout_between_deals_gives_only_the_extra_scopa(self):
        doc = sim(seed=4)
        doc["deals"].pop()
        doc["outcome"] = {"kind": "abandon", "seat": 1}
        verdict = verify_document(doc)
        assert verdict["valid"], verdict["errors"]
        assert verdict["penalty"]["points"] == [1, 0] and verdict["penalty"]["unsecured"] == []


CLOCK = {"move_s": 20, "bank_s": 60, "total_s": 1800}


class TestClock:
    def test_clean_clock(self):
        verdict = verify_document(sim(seed=1, clock=CLOCK))
        assert (
            verdict["valid"] and verdict["clock"]["checked"] and verdict["clock"]["timeouts"] == []
        )

    def test_declared_timeout_confirmed(self):
        doc = sim(seed=1, clock=CLOCK, outcome={"kind": "timeout", "seat": 0, "deal": 1, "play": 5})
        verdict = verify_document(doc)
        assert verdict["valid"], verdict["errors"]
        assert verdict["clock"]["declared_timeout"] == "confirmed"

    def test_declared_timeout_that_did_not_happen(self):
        doc = sim(seed=1, clock=CLOCK, outcome={"kind": "timeout", "seat": 0, "deal": 1, "play": 5})
        last = doc["deals"][-1]
        doc["outcome"]["t_ms"] = last["plays"][-1]["t_ms"] + 5_000
        verdict = verify_document(doc)
        assert verdict["clock"]["declared_timeout"] == "not_confirmed"
        error = verdict["errors"][0]
        assert (error["code"], error["deal"], error["play"]) == (
            "timeout_not_confirmed",
            len(doc["deals"]) - 1,
            len(last["plays"]),
        )

    def test_undeclared_timeout_from_bank_time(self):
        doc = sim(seed=1, clock=CLOCK)
        plays = doc["deals"][1]["plays"]
        for later in plays[6:]:
            later["t_ms"] += 81_000  # play 6 took over 20 s + the whole 60 s bank
        verdict = verify_document(doc)
        error = verdict["errors"][0]
        assert (error["code"], error["deal"], error["play"]) == ("undeclared_timeout", 1, 6)
        assert verdict["clock"]["timeouts"][0]["kind"] == "bank"

    def test_bank_time_is_consumed_across_the_match(self):
        doc = sim(seed=1, clock=CLOCK)

        def slow_down(deal_index, play_index, ms):
            """The play takes `ms` longer; every later time moves with it."""
            for d, deal in enumerate(doc["deals"]):
                if d > deal_index:
                    deal["start_ms"] += ms
                for p, play_ in enumerate(deal["plays"]):
                    if (d, p) >= (deal_index, play_index):
                        play_["t_ms"] += ms

        slow_down(0, 0, 55_000)  # 20 s of move time then 35 s of the 60 s bank
        side = doc["deals"][0]["plays"][0]["seat"] % 2
        verdict = verify_document(doc)
        assert verdict["valid"] and verdict["clock"]["bank_left_ms"][side] < 25_000 + 1
        again = next(p for p, pl in enumerate(doc["deals"][1]["plays"]) if pl["seat"] % 2 == side)
        slow_down(1, again, 55_000)  # another 35 s: 70 s > 60 s of bank for the match
        error = verify_document(doc)["errors"][0]
        assert (error["code"], error["deal"], error["play"]) == ("undeclared_timeout", 1, again)

    def test_undeclared_timeout_from_total_time(self):
        doc = sim(seed=1, clock={"move_s": 20, "bank_s": 0, "total_s": 60})
        verdict = verify_document(doc)
        assert verdict["errors"][0]["code"] == "undeclared_timeout"
        assert verdict["clock"]["timeouts"][0]["kind"] == "total"


def test_knockout_record_tied_when_time_runs_out_plays_tie_break_deals():
    """docs/match-record.md, seed 000 "Parità": in a knock-out a tie when time runs out goes to the
    tie-break deals; the verifier marks them and the match is won on them (the old rule played
    on with regular deals and called it a time-limit win)."""
    clock = {"move_s": 20, "bank_s": 0}
    end = {"target": 21, "time_limit_s": 240}
    doc = sim(seed=8, end=end, knockout=True, clock=clock)
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    time_up = doc["outcome"]["time_up_in_deal"]
    played = [d for d in verdict["deals"] if not d["void"]]
    regular_totals = [sum(d["points"][s] for d in played if not d["tiebreak"]) for s in (0, 1)]
    assert regular_totals[0] == regular_totals[1]
    assert [d["tiebreak"] for d in verdict["deals"]][time_up + 1 :] == [True] * (
        len(verdict["deals"]) - time_up - 1
    )
    assert verdict["end"]["reason"] == "tiebreak" and verdict["winner"] is not None
    # the same deals outside a knock-out: a tie at time up plays on, no tie-break deal
    group = clone(doc)
    group["knockout"] = False
    group_verdict = verify_document(group)
    assert not any(d["tiebreak"] for d in group_verdict["deals"])
