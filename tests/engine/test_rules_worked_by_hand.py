"""The engine's answers on records whose right answer was worked out by hand, from the rules in
docs/match-record.md and the seeds, not from the engine; and an independent referee
(`reference.py`) that must agree with the engine on simulated and damaged records.

Each record is built so that the hands and the table are known.
"""

import copy
import itertools
import random

import pytest

from scopa import (
    Options,
    PlayError,
    parse_record,
    position,
    replay_timeline,
    rules_for,
    simulate_match,
    verify_document,
)
from scopa.scoring import deal_units, interrupted_deal

from . import reference
from .helpers import first_deal_record


def first_error(doc):
    verdict = verify_document(doc)
    assert not verdict["valid"]
    error = verdict["errors"][0]
    return error["code"], error["deal"], error["play"], error["messages"]


def test_missing_deals_sentence_names_the_missing_deal():
    doc = simulate_match(seed=2, end={"target": 11})
    doc["deals"] = doc["deals"][:-1]
    missing = len(doc["deals"])
    code, deal, play, messages = first_error(doc)
    assert (code, deal, play) == ("missing_deals", missing, None)
    assert messages["it"] == (
        f"smazzata {missing}: la partita non è finita (nessuna squadra è in testa da sola con "
        f"almeno 11 punti): manca la smazzata {missing}"
    )
    assert messages["en"] == (
        f"deal {missing}: the match is not over (no side leads alone with at least 11 points): "
        f"deal {missing} is missing"
    )


def test_missing_deals_in_a_fixed_number_of_deals():
    doc = simulate_match(seed=2, end={"deals": 2})
    doc["deals"] = doc["deals"][:1]
    code, deal, play, messages = first_error(doc)
    assert (code, deal, play) == ("missing_deals", 1, None)
    assert messages["it"] == (
        "smazzata 1: la partita non è finita (smazzate giocate: 1 su 2): manca la smazzata 1"
    )


# --- whole deals: the last play, the second-to-last play, the ace sweep ------------------------


def deal_from_text(dealer, deck, plays):
    """`9C>9S` takes the 9S with the 9C; a bare `5D` is laid down."""
    parsed = []
    for token in plays.split():
        card, _, take = token.partition(">")
        parsed.append({"card": card, "take": take.split("+") if take else []})
    return {"dealer": dealer, "deck": deck.split(), "plays": parsed}


SWEEP_34 = deal_from_text(
    1,
    "9C 8S 3S 1S 6C 8B 4S 4B 9S 7D 5D 1C 10D 3B 6S 7B 2B 5S 8C 2C 1B 3C 9B 10C 2S 3D 10B 8D "
    "7S 1D 5C 6D 9D 5B 6B 4D 7C 4C 2D 10S",
    "3S 1S 9C>9S 8S>7D+1S 6C 8B>4S+4B 6S>6C 3B>3S 5D 7B 10D 1C 8C>7B+1C 5S>5D 2B 3C 1B 2C>2B "
    "10B>10D 8D 9B>1B+8D 10C 2S 3D>3C 7S 6D 9D>2S+7S 5B 5C>5B 1D 2D 10S>10C 7C>6D+1D 4D "
    "6B>2D+4D 4C",
)
SWEEP_35 = deal_from_text(
    0,
    "6C 8C 9S 3S 9C 1C 9D 1S 10B 6S 7D 8D 8S 10C 5D 9B 7S 5S 1B 4B 4C 4D 8B 2C 3D 2B 10D 4S "
    "7B 6D 2S 3B 10S 1D 6B 5C 3C 2D 5B 7C",
    "9C>9D 1C>1S 9S 3S 6C>6S 8C 8S>8C 8D 5D 10C>10B 7D 9B>9S 7S>7D 4D 4C>4D 4B 1B 5S>5D 10D "
    "4S>4B 8B>8D 2C 3D>3S 2B>2C 10S>10D 1D>1B 7B 6D 2S 3B 3C>3B 5C 6B>6D 2D>2S 5B>5C 7C>7B",
)
ACE_SWEEPS = deal_from_text(
    0,
    "10C 4C 6D 10S 4D 2C 9B 5C 9C 7S 10D 3D 2D 5B 1C 4S 8B 2S 2B 10B 9S 1B 3C 7B 6B 3S 6C 3B "
    "7D 8D 8C 7C 6S 1D 5D 1S 4B 9D 5S 8S",
    "6D 2C 10C 10S>10C 4D 4C>4D 2D>2C 5B>5C 1C>9B+9C+7S+6D 4S 10D 3D 8B 10B>10D 2B "
    "1B>4S+3D+8B+2B 9S 2S 6C 7B 3C 3B>3C 6B>6C 3S 6S 8D>2S+6S 7D>7B 7C 8C 1D>9S+3S+7C+8C 5D 8S "
    "4B 9D>5D+4B 5S 1S>8S+5S",
)


def one_deal(deal, variant="scopa"):
    doc = {
        "schema": "scopa-match/1",
        "variant": variant,
        "end": {"deals": 1},
        "seats": ["a", "b"],
        "deals": [copy.deepcopy(deal)],
    }
    return doc, verify_document(doc)


def test_scopa_on_the_second_to_last_play_counts_and_the_last_card_goes_to_the_sweeper():
    # play 34 (seat 0) takes 2D+4D, the whole table; play 35 (seat 1) lays 4C on the empty
    # table, and it goes to seat 0, the last capturer, without a scopa
    doc, verdict = one_deal(SWEEP_34)
    assert verdict["valid"], verdict["errors"]
    frames = replay_timeline(doc)
    assert frames[-2]["move"]["scopa"] is True and frames[-2]["move"]["side"] == 0
    assert frames[-1]["move"]["take"] == [] and frames[-1]["table"] == []
    assert "4C" in frames[-1]["captured"][0]
    assert [row["scope"] for row in verdict["deals"][0]["breakdown"]] == [1, 1]
    # counted by hand: side 0 24 cards, 6 denari, primiera; side 1 the settebello
    assert verdict["deals"][0]["points"] == [4, 2]


def test_scopa_on_the_very_last_play_is_not_counted():
    # play 35 (seat 0) takes the lone 7B with the 7C: the table is empty, but it is the last play
    doc, verdict = one_deal(SWEEP_35)
    assert verdict["valid"], verdict["errors"]
    frames = replay_timeline(doc)
    assert frames[-1]["move"]["take"] == ["7B"] and frames[-1]["table"] == []
    assert frames[-1]["move"]["scopa"] is False
    assert [row["scope"] for row in verdict["deals"][0]["breakdown"]] == [1, 0]
    assert verdict["deals"][0]["points"] == [1, 4]


def test_ace_sweeps_are_never_scope_also_on_the_last_play():
    # four aces each take a table without aces (plays 8, 15, 29, 35): never a scopa
    doc, verdict = one_deal(ACE_SWEEPS, variant="scopa-d-assi")
    assert verdict["valid"], verdict["errors"]
    frames = replay_timeline(doc)
    sweeps = [f["play"] for f in frames[1:] if f["move"]["card"][:-1] == "1"]
    assert sweeps == [8, 15, 29, 35]
    assert all(frames[p + 1]["table"] == [] for p in sweeps)
    assert not any(f["move"]["scopa"] for f in frames[1:])
    assert verdict["deals"][0]["points"] == [2, 2]
    # the same deal in classic scopa is illegal at the first ace: it may only take sums of 1
    code, deal, play, _ = first_error(one_deal(ACE_SWEEPS)[0])
    assert (code, deal, play) == ("wrong_sum", 0, 8)


# --- one play at a time --------------------------------------------------------------------------


def test_several_equal_cards_take_exactly_one_of_them():
    table = ["8C", "8S", "5D", "3B"]
    for take in (["8C"], ["8S"]):
        doc = first_deal_record({0: ["8D", "1C", "2C"]}, table, [{"card": "8D", "take": take}])
        assert first_error(doc)[:3] == ("missing_plays", 0, 1)
    for take in (["8C", "8S"], ["5D", "3B"], []):
        doc = first_deal_record({0: ["8D", "1C", "2C"]}, table, [{"card": "8D", "take": take}])
        code, _, play, messages = first_error(doc)
        assert play == 0 and code in ("must_take_equal_rank", "must_capture")
        assert "il fante di coppe o il fante di spade" in messages["it"] or code == "must_capture"


def test_seed_000_two_fives_three_two_with_a_re():
    # seed 000's drag-and-drop example: table 5, 5, 3, 2 and a king: 5+5, or either 5 with 3+2
    table = ["5C", "5B", "3D", "2S"]
    ok = (["5C", "5B"], ["5C", "3D", "2S"], ["5B", "2S", "3D"])
    for take in ok:
        doc = first_deal_record({0: ["10D", "1C", "2C"]}, table, [{"card": "10D", "take": take}])
        assert first_error(doc)[:3] == ("missing_plays", 0, 1)
    doc = first_deal_record(
        {0: ["10D", "1C", "2C"]}, table, [{"card": "10D", "take": ["5C", "5B", "3D"]}]
    )
    assert first_error(doc)[:3] == ("wrong_sum", 0, 0)


def test_ace_on_a_table_with_an_ace_and_other_cards_takes_only_an_ace_and_no_scopa():
    table = ["1S", "5C", "4B", "7S"]
    hands = {0: ["1D", "2C", "3C"]}
    doc = first_deal_record(hands, table, [{"card": "1D", "take": ["1S"]}], variant="scopa-d-assi")
    frames = replay_timeline(doc)
    assert frames[1]["table"] == ["5C", "4B", "7S"] and frames[1]["move"]["scopa"] is False
    doc = first_deal_record(hands, table, [{"card": "1D", "take": table}], variant="scopa-d-assi")
    assert first_error(doc)[:3] == ("must_take_equal_rank", 0, 0)
    doc = first_deal_record(hands, table, [{"card": "1D", "take": []}], variant="scopa-d-assi")
    assert first_error(doc)[:3] == ("must_capture", 0, 0)


# --- partnerships, timeout and abandon, clocks ---------------------------------------------------


def test_four_seats_pool_captures_and_a_partners_scopa_then_timeout():
    # dealer 3, seat 0 plays first; table 2D 3C 4B 6S
    hands = {
        0: ["10S", "8S", "7B"],
        1: ["9C", "1C", "7C"],
        2: ["9S", "6C", "7S"],
        3: ["8C", "5S", "5B"],
    }
    plays = [
        {"card": "10S", "take": ["4B", "6S"]},  # seat 0
        {"card": "9C", "take": []},  # seat 1: 9 cannot be made from 2, 3
        {"card": "9S", "take": ["9C"]},  # seat 2
        {"card": "8C", "take": []},  # seat 3
        {"card": "8S", "take": ["8C"]},  # seat 0
        {"card": "1C", "take": []},  # seat 1
        {"card": "6C", "take": ["2D", "3C", "1C"]},  # seat 2 sweeps: a scopa for side 0
    ]
    doc = first_deal_record(hands, ["2D", "3C", "4B", "6S"], plays, dealer=3, seats=4)
    doc["outcome"] = {"kind": "timeout", "seat": 3}
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    # side 0 keeps its scopa, gets the 4 unsecured points (11 cards, 1 denaro, settebello
    # loose, primiera open) and the extra scopa
    assert verdict["penalty"]["unsecured"] == ["carte", "denari", "settebello", "primiera"]
    assert verdict["totals"] == [6, 0]
    assert (verdict["winner"], verdict["margin"]) == (0, 6)
    assert verdict["deals"][0]["breakdown"][0]["scope"] == 2
    # the timeout is by the seat to play (3); seat 1, its partner, was not to play
    doc["outcome"] = {"kind": "timeout", "seat": 1}
    assert first_error(doc)[:3] == ("timeout_not_on_turn", 0, 7)


def test_three_sides_abandon_both_others_get_the_points_and_a_scopa():
    # dealer 2, seat 0 plays first and sweeps 1D+2C+3B+4S with a king: a scopa
    doc = first_deal_record(
        {0: ["10S", "5C", "6C"]},
        ["1D", "2C", "3B", "4S"],
        [{"card": "10S", "take": ["1D", "2C", "3B", "4S"]}],
        dealer=2,
        seats=3,
    )
    doc["outcome"] = {"kind": "abandon", "seat": 1}
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    assert verdict["penalty"]["points"] == [5, 0, 5]
    assert verdict["totals"] == [6, 0, 5]
    assert (verdict["winner"], verdict["margin"], verdict["end"]["reason"]) == (0, 1, "abandon")


def test_bank_time_is_shared_by_partners():
    clock = {"move_s": 20, "bank_s": 60, "total_s": 1800}
    doc = simulate_match(seats=4, seed=3, clock=clock)
    deal = doc["deals"][0]
    first = (deal["dealer"] + 1) % 4
    seat0, seat2 = (next(p for p in range(36) if (first + p) % 4 == s) for s in (0, 2))

    def think(p, ms):
        plays = deal["plays"]
        before = plays[p - 1]["t_ms"] if p else deal["start_ms"]
        shift = before + ms - plays[p]["t_ms"]
        for later in plays[p:]:
            later["t_ms"] += shift
        for other in doc["deals"][1:]:
            other["start_ms"] += shift
            for play in other["plays"]:
                play["t_ms"] += shift

    think(seat0, 55_000)  # 35 s of side 0's 60 s bank
    verdict = verify_document(doc)
    assert verdict["valid"] and verdict["clock"]["bank_left_ms"][0] == 25_000
    think(seat2, 55_000)  # the partner's 35 s empty the same bank
    code, d, p, messages = first_error(doc)
    assert (code, d, p) == ("undeclared_timeout", 0, max(seat0, seat2))
    assert f"il posto {(first + max(seat0, seat2)) % 4}" in messages["it"]


# --- the referee's sentences ---------------------------------------------------------------------


def test_sentences_read_naturally_in_italian():
    table = ["6S", "5C", "4B", "7S"]
    doc = first_deal_record(
        {0: ["1D", "2C", "3C"]}, table, [{"card": "1D", "take": []}], variant="scopa-d-assi"
    )
    _, _, _, messages = first_error(doc)
    assert messages["it"] == (
        "smazzata 0, giocata 0: senza assi in tavola l'asso di denari deve prendere tutte le "
        "carte (6 di spade + 5 di coppe + 4 di bastoni + 7 di spade), non può restare in tavola"
    )
    assert messages["en"] == (
        "deal 0, play 0: with no ace on the table 1D must take every card (6S+5C+4B+7S), "
        "it cannot be laid down"
    )
    doc = first_deal_record(
        {0: ["1D", "2C", "3C"]}, table, [{"card": "1D", "take": ["5C"]}], variant="scopa-d-assi"
    )
    assert first_error(doc)[3]["it"] == (
        "smazzata 0, giocata 0: senza assi in tavola l'asso di denari deve prendere tutte le "
        "carte (6 di spade + 5 di coppe + 4 di bastoni + 7 di spade), non 5 di coppe"
    )
    doc = simulate_match(seed=2, outcome={"kind": "timeout", "seat": 0, "deal": 0, "play": 5})
    doc["outcome"]["seat"] = 1 - doc["outcome"]["seat"]
    message = first_error(doc)[3]["it"]
    assert "non era di turno (toccava al posto " in message
    doc = first_deal_record(
        {0: ["10D", "1C", "2C"]}, ["5C", "5B", "3D", "2S"], [{"card": "10D", "take": ["5C", "5C"]}]
    )
    assert first_error(doc)[3]["it"] == (
        "smazzata 0, giocata 0: la presa 5 di coppe + 5 di coppe comprende carte che non sono in "
        "tavola o che sono ripetute (5 di coppe)"
    )


def test_six_seats_pool_the_trio_captures():
    # dealer 5, seat 0 plays first; seats 0, 2, 4 against 1, 3, 5
    hands = {
        0: ["10S", "8S", "1S"],
        1: ["9C", "1C", "1B"],
        2: ["9S", "8B", "2S"],
        3: ["8C", "2C", "2B"],
        4: ["5S", "3S", "3B"],
        5: ["7C", "4D", "4S"],
    }
    plays = [
        {"card": "10S", "take": ["4B", "6S"]},  # seat 0
        {"card": "9C", "take": []},
        {"card": "9S", "take": ["9C"]},  # seat 2
        {"card": "8C", "take": []},
        {"card": "5S", "take": ["2D", "3C"]},  # seat 4
        {"card": "7C", "take": []},
        {"card": "8S", "take": ["8C"]},  # seat 0
        {"card": "1C", "take": []},
        {"card": "8B", "take": ["7C", "1C"]},  # seat 2 sweeps: scopa for the trio
    ]
    doc = first_deal_record(hands, ["2D", "3C", "4B", "6S"], plays, dealer=5, seats=6)
    doc["outcome"] = {"kind": "abandon", "seat": 3}
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    frames = replay_timeline(doc)
    assert len(frames[-1]["captured"][0]) == 13 and frames[-1]["captured"][1] == []
    assert frames[-1]["scope"] == [1, 0]
    assert verdict["totals"] == [1 + 4 + 1, 0]
    # a play by the wrong seat of the right trio is still the wrong seat
    doc["deals"][0]["plays"][2]["seat"] = 4
    assert first_error(doc)[:3] == ("wrong_seat", 0, 2)


# --- knock-out -----------------------------------------------------------------------------------


def test_third_tied_tie_break_the_last_capturer_loses_on_a_whole_record():
    # a one-deal knock-out match whose regular deal and three tie-breaks all end 2-2
    doc = simulate_match(seed=1032, end={"deals": 1}, knockout=True, declared=False)
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    assert [d["points"] for d in verdict["deals"]] == [[2, 2]] * 4
    assert [d["tiebreak"] for d in verdict["deals"]] == [False, True, True, True]
    third = doc["deals"][3]
    last = max(p for p, play in enumerate(third["plays"]) if play["take"])
    last_side = (third["dealer"] + 1 + last) % 2
    assert verdict["winner"] == 1 - last_side
    assert verdict["end"] == {"reason": "tiebreak_last_capture", "deal": 3}
    assert verdict["margin"] == 0
    doc["deals"] = doc["deals"][:3]
    code, deal, play, messages = first_error(doc)
    assert (code, deal, play) == ("missing_deals", 3, None)
    assert messages["it"] == (
        "smazzata 3: la partita non è finita (spareggio 3 da giocare): manca la smazzata 3"
    )


def test_a_server_time_that_goes_backwards_does_not_invent_a_timeout():
    doc = simulate_match(seed=4, clock={"move_s": 20, "bank_s": 60, "total_s": 1800})
    plays = doc["deals"][1]["plays"]
    plays[3]["t_ms"] = plays[2]["t_ms"] - 120_000  # one wrong time, earlier than the play before
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    assert verdict["clock"]["checked"] is False and verdict["clock"]["timeouts"] == []


def test_time_up_sentences_without_a_dash_for_a_missing_deal():
    doc = simulate_match(
        seed=4,
        clock={"move_s": 20, "bank_s": 60, "total_s": 1800},
        end={"target": 11, "time_limit_s": 100_000},
    )
    assert "time_up_in_deal" not in doc["outcome"]
    doc["outcome"]["time_up_in_deal"] = 1  # the server times never reach the limit
    verdict = verify_document(doc)
    error = next(e for e in verdict["errors"] if e["code"] == "time_up_mismatch")
    assert (error["deal"], error["play"]) == (1, None)
    assert error["messages"]["it"] == (
        "smazzata 1: secondo l'orologio del server il tempo di gioco non è scaduto in nessuna "
        "smazzata registrata, non nella 1"
    )
    assert error["messages"]["en"] == (
        "deal 1: by the server clock playing time did not run out in any recorded deal, "
        "not in deal 1"
    )
    undeclared = PlayError("time_up_mismatch", 2, None, expected=2, got="-")
    assert undeclared.message("it") == (
        "smazzata 2: il tempo di gioco è scaduto nella smazzata 2, ma l'esito non lo dichiara "
        "(time_up_in_deal)"
    )


# --- an independent referee ----------------------------------------------------------------------

# codes of the engine that the reference reports as one kind
_REFERENCE_KIND = {
    "must_take_equal_rank": "illegal",
    "wrong_sum": "illegal",
    "wrong_fifteen": "illegal",
    "must_capture": "illegal",
    "ace_must_take_all": "illegal",
    "take_not_on_table": "take",
}


def _same_answer(doc):
    engine = verify_document(doc)
    ref = reference.verify_ref(copy.deepcopy(doc))
    if ref["valid"] is True:
        assert engine["valid"], engine["errors"]
        assert [d["points"] for d in engine["deals"]] == ref["points"]
        assert engine["totals"] == ref["totals"]
        assert (engine["winner"], engine["margin"]) == (ref["winner"], ref["margin"])
        assert engine["end"]["reason"] == ref["reason"]
    else:
        assert not engine["valid"]
        error = engine["errors"][0]
        kind = _REFERENCE_KIND.get(error["code"], error["code"])
        assert (kind, error["deal"], error["play"]) == ref["error"]


@pytest.mark.parametrize("variant", ["scopa", "scopa-d-assi", "scopa-15"])
@pytest.mark.parametrize("seats", [2, 3, 4, 6])
def test_an_independent_referee_agrees_on_simulated_and_damaged_records(variant, seats):
    rng = random.Random(f"{variant}{seats}")
    options = [
        {},
        {"rebello": True, "napola": True, "primiera_missing_suit": "compare_present"},
        {"void_three_kings": False, "forced_capture": False},
    ]
    ends = [({"target": 11}, False), ({"deals": 1}, True), ({"deals": 2}, False)]
    for seed in range(4):
        for opts in options:
            end, knockout = ends[seed % 3]
            doc = simulate_match(
                variant=variant,
                seats=seats,
                options=opts,
                end=end,
                knockout=knockout,
                seed=seed,
                policy="greedy" if seed % 2 else "random",
            )
            _same_answer(doc)
            damaged = copy.deepcopy(doc)
            deal = damaged["deals"][rng.randrange(len(damaged["deals"]))]
            if not deal.get("plays"):
                continue
            p = rng.randrange(len(deal["plays"]))
            resolved = dict(reference.DEF, **opts)
            position = reference.play_deal(
                variant, resolved, seats, deal["dealer"], list(deal["deck"]), deal["plays"][:p]
            )
            hand = position["hands"][(deal["dealer"] + 1 + p) % seats]
            table = position["table"]
            deal["plays"][p] = {
                "card": rng.choice(hand),
                "take": rng.sample(table, rng.randrange(len(table) + 1)),
            }
            _same_answer(damaged)
            shorter = copy.deepcopy(doc)
            shorter["deals"] = shorter["deals"][:-1]
            _same_answer(shorter)


@pytest.mark.parametrize("variant", ["scopa", "scopa-15"])
@pytest.mark.parametrize("seats", [2, 3])
def test_secured_points_checked_against_every_way_of_sharing_the_loose_cards(variant, seats):
    """The penalty's 'secured' test looks only at the extremes (all loose cards to one side);
    here every sharing of a few loose cards is tried."""
    opts = {"napola": True, "rebello": True, "primiera_missing_suit": "compare_present"}
    rules = rules_for(variant, Options.for_variant(variant, opts))
    checked = 0
    for seed in range(12):
        doc = simulate_match(
            variant=variant, seats=seats, options=opts, seed=seed, end={"deals": 1}
        )
        if doc["deals"][0].get("void"):
            continue
        record = parse_record(doc)
        most = 8 if seats == 2 else 5
        state = next(
            (
                s
                for p in range(36)
                if (s := position(record, 0, p)).loose_mask().bit_count() <= most
            ),
            None,
        )
        if state is None:
            continue
        loose = [c for c in range(40) if state.loose_mask() >> c & 1]
        owners = None
        for sharing in itertools.product(range(seats if seats == 3 else 2), repeat=len(loose)):
            masks = list(state.captured)
            for card, side in zip(loose, sharing, strict=True):
                masks[side] |= 1 << card
            units = [tuple(points) for _, _, points in deal_units(rules, masks)]
            owners = [{u} for u in units] if owners is None else owners
            for seen, unit in zip(owners, units, strict=True):
                seen.add(unit)
        units = deal_units(rules, list(state.captured))
        open_units = sorted((units[i][0], units[i][1]) for i, o in enumerate(owners) if len(o) > 1)
        _, _, unsecured = interrupted_deal(rules, state.captured, state.scope, state.loose_mask())
        assert sorted(unsecured) == open_units
        checked += 1
    assert checked >= 6
