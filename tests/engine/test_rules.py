"""Worked examples of the seeds: capture choices, the equal-rank rule, aces, the 15-sum game."""

import pytest

from scopa import CARD_INDEX, Options, legal_takes, rules_for, verify_document
from scopa.rules import check_take
from scopa.state import DealState

from .helpers import arrange_deck, first_deal_record

C = CARD_INDEX


def cards(*codes):
    return [C[code] for code in codes]


def takes_as_codes(takes):
    from scopa import CARD_CODES

    return sorted(sorted(CARD_CODES[c] for c in take) for take in takes)


SCOPA = rules_for("scopa", Options.for_variant("scopa"))
ASSI = rules_for("scopa-d-assi", Options.for_variant("scopa-d-assi"))
FIFTEEN = rules_for("scopa-15", Options.for_variant("scopa-15"))
FIFTEEN_FREE = rules_for("scopa-15", Options.for_variant("scopa-15", {"forced_capture": False}))


def test_equal_rank_beats_sum_fante():
    # seed 000: table 3, 5, fante; a fante takes only the fante
    table = cards("3D", "5C", "8C")
    assert takes_as_codes(legal_takes(SCOPA, C["8S"], table)) == [["8C"]]
    code, _ = check_take(SCOPA, C["8S"], table, (C["3D"], C["5C"]))
    assert code == "must_take_equal_rank"


def test_equal_rank_beats_sum_cavallo():
    # seed 001: table 3, 6, cavallo; a cavallo takes only the cavallo
    table = cards("3D", "6C", "9B")
    assert takes_as_codes(legal_takes(SCOPA, C["9S"], table)) == [["9B"]]


def test_free_choice_among_sums_of_different_size():
    # seed 000: table 1, 3, 4, 5; a 9 takes 1+3+5 or 4+5
    table = cards("1D", "3C", "4B", "5S")
    assert takes_as_codes(legal_takes(SCOPA, C["9C"], table)) == [["1D", "3C", "5S"], ["4B", "5S"]]
    assert check_take(SCOPA, C["9C"], table, (C["1D"], C["3C"], C["5S"])) is None
    assert check_take(SCOPA, C["9C"], table, (C["4B"], C["5S"])) is None


def test_free_choice_cavallo_seven_two_or_four_five():
    # seed 001: table 7, 2, 4, 5; a cavallo takes 7+2 or 4+5
    table = cards("7C", "2B", "4S", "5D")
    assert takes_as_codes(legal_takes(SCOPA, C["9D"], table)) == [["2B", "7C"], ["4S", "5D"]]


def test_equal_rank_choice_of_which():
    table = cards("5C", "5B", "2D", "3S")
    assert takes_as_codes(legal_takes(SCOPA, C["5D"], table)) == [["5B"], ["5C"]]


def test_capture_is_compulsory():
    table = cards("2D", "3S")
    code, _params = check_take(SCOPA, C["5C"], table, ())
    assert code == "must_capture"
    assert check_take(SCOPA, C["6C"], table, ()) is None


def test_wrong_sum_and_cards_not_on_table():
    table = cards("2D", "3S", "4C")
    assert check_take(SCOPA, C["6C"], table, (C["2D"], C["3S"]))[0] == "wrong_sum"
    assert check_take(SCOPA, C["6C"], table, (C["2D"], C["4B"]))[0] == "take_not_on_table"
    assert check_take(SCOPA, C["6C"], table, (C["2D"], C["2D"]))[0] == "take_not_on_table"


class TestAcesOfScopaDAssi:
    def test_lone_ace_on_table_is_taken_and_is_a_scopa(self):
        deck = arrange_deck(2, 1, {0: ["1D", "4C", "5C"]}, ["1C", "10D", "10C", "9S"])
        state = DealState(ASSI, 2, 2, 1, [C[c] for c in deck])
        state.table = [C["1C"]]
        assert legal_takes(ASSI, C["1D"], state.table) == [(C["1C"],)]
        assert state.apply(C["1D"], (C["1C"],)) is True

    def test_ace_takes_all_without_aces_and_it_is_not_a_scopa(self):
        deck = arrange_deck(2, 1, {0: ["1D", "4C", "5C"]}, ["3C", "10D", "7C", "9S"])
        state = DealState(ASSI, 2, 2, 1, [C[c] for c in deck])
        table = list(state.table)
        assert legal_takes(ASSI, C["1D"], table) == [tuple(table)]
        assert state.apply(C["1D"], tuple(table)) is False
        assert state.scope == [0, 0]
        assert check_take(ASSI, C["1D"], table, (C["3C"],))[0] == "ace_must_take_all"

    def test_ace_with_aces_on_table_takes_one_ace_only(self):
        table = cards("1C", "4B", "1S")
        assert takes_as_codes(legal_takes(ASSI, C["1D"], table)) == [["1C"], ["1S"]]

    def test_ace_on_empty_table_is_laid_down(self):
        assert legal_takes(ASSI, C["1D"], []) == [()]

    def test_classic_scopa_ace_does_not_take_all(self):
        assert legal_takes(SCOPA, C["1D"], cards("3C", "5D")) == [()]

    def test_verifier_message_for_ace(self):
        doc = first_deal_record(
            {0: ["1D", "4C", "5C"]},
            ["3C", "10D", "7C", "9S"],
            [{"card": "1D", "take": ["3C"]}],
            variant="scopa-d-assi",
        )
        verdict = verify_document(doc, "en")
        assert verdict["errors"][0]["code"] == "ace_must_take_all"


class TestScopa15:
    def test_sum_with_played_card_makes_fifteen(self):
        table = cards("5C", "3B", "2S", "7D")
        takes = takes_as_codes(legal_takes(FIFTEEN, C["10D"], table))
        assert takes == [["2S", "3B"], ["5C"]]

    def test_forced_capture_option(self):
        table = cards("5C", "9B")
        assert check_take(FIFTEEN, C["10D"], table, ())[0] == "must_capture"
        assert check_take(FIFTEEN_FREE, C["10D"], table, ()) is None
        assert () in legal_takes(FIFTEEN_FREE, C["10D"], table)
        assert check_take(FIFTEEN, C["10D"], table, (C["9B"],))[0] == "wrong_fifteen"

    def test_no_equal_rank_rule_in_scopa_15(self):
        table = cards("5C", "3B", "2S")
        assert (C["5C"],) in legal_takes(FIFTEEN, C["10D"], table)

    @pytest.mark.parametrize(
        ("table", "expected"),
        [
            (["1D", "2C", "5B", "7S"], 1),
            (["10D", "10C", "5B", "5S"], 2),
            (["1D", "2C", "3B", "4S"], 0),
        ],
    )
    def test_dealers_fifteen_and_thirty(self, table, expected):
        deck = arrange_deck(2, 0, {}, table)
        state = DealState(FIFTEEN, 2, 2, 0, [C[c] for c in deck])
        assert state.dealer_fifteen == expected
        assert state.scope[0] == expected
        assert (state.table == []) == bool(expected)
        if expected:
            assert state.captured[0].bit_count() == 4
            assert state.last_capturer == 0

    def test_no_void_deal_in_scopa_15(self):
        deck = arrange_deck(2, 0, {}, ["10D", "10C", "10B", "1S"])
        state = DealState(FIFTEEN, 2, 2, 0, [C[c] for c in deck])
        assert not state.void


def test_dealing_order_one_card_at_a_time_from_the_seat_after_the_dealer():
    deck = [C[c] for c in arrange_deck(3, 1, {}, ["1D", "2D", "3D", "4D"])]
    state = DealState(SCOPA, 3, 3, 1, deck)
    assert state.hands[2] == [deck[0], deck[3], deck[6]]
    assert state.hands[0] == [deck[1], deck[4], deck[7]]
    assert state.hands[1] == [deck[2], deck[5], deck[8]]
    assert state.table == deck[9:13]
    assert state.to_move == 2


def test_no_scopa_on_the_last_play_and_leftovers_to_last_capturer():
    deck = [C[c] for c in arrange_deck(2, 1, {}, ["1D", "2D", "3D", "4D"])]
    state = DealState(SCOPA, 2, 2, 1, deck)
    state.played = 35
    state.to_move = 0
    state.hands = [[C["5S"]], []]
    state.table = [C["5C"]]
    assert state.apply(C["5S"], (C["5C"],)) is False
    assert state.scope == [0, 0]
    # leftovers: a deal whose last play lays a card down gives the table to the last capturer
    state = DealState(SCOPA, 2, 2, 1, deck)
    state.played, state.to_move, state.last_capturer = 35, 0, 1
    state.hands = [[C["6S"]], []]
    state.table = [C["5C"]]
    state.apply(C["6S"], ())
    assert state.table == []
    assert state.captured[1] & (1 << C["5C"]) and state.captured[1] & (1 << C["6S"])


def test_referee_sentence_in_both_languages():
    doc = first_deal_record(
        {0: ["8S", "1C", "2C"]},
        ["5D", "3B", "8C", "9S"],
        [
            {"card": "8S", "take": ["5D", "3B"]},
        ],
    )
    verdict = verify_document(doc)
    error = verdict["errors"][0]
    assert (error["deal"], error["play"], error["code"]) == (0, 0, "must_take_equal_rank")
    assert error["messages"]["en"] == "deal 0, play 0: 8S must take the 8C on the table, not 5D+3B"
    assert error["messages"]["it"] == (
        "smazzata 0, giocata 0: il fante di spade deve prendere il fante di coppe, "
        "non 5 di denari + 3 di bastoni"
    )
    assert error["message"] == error["messages"]["it"]


@pytest.mark.parametrize(
    ("hand", "table", "take", "variant"),
    [
        (["9C", "2B", "2S"], ["1D", "3C", "4B", "5S"], ["1D", "3C", "5S"], "scopa"),
        (["9C", "2B", "2S"], ["1D", "3C", "4B", "5S"], ["4B", "5S"], "scopa"),
        (["9D", "2B", "2S"], ["7C", "2C", "4S", "5D"], ["7C", "2C"], "scopa"),
        (["9D", "2B", "2S"], ["7C", "2C", "4S", "5D"], ["4S", "5D"], "scopa"),
        (["8S", "2B", "2S"], ["3D", "5C", "8C", "9S"], ["8C"], "scopa"),
        (["1S", "2B", "2S"], ["3D", "5C", "8C", "9S"], ["3D", "5C", "8C", "9S"], "scopa-d-assi"),
        (["10S", "2B", "2S"], ["3D", "2C", "8C", "5S"], ["3D", "2C"], "scopa-15"),
    ],
)
def test_seed_examples_accepted_by_the_verifier(hand, table, take, variant):
    """Play 0 is legal: the verifier's first complaint is the missing play 1."""
    doc = first_deal_record({0: hand}, table, [{"card": hand[0], "take": take}], variant=variant)
    error = verify_document(doc)["errors"][0]
    assert (error["code"], error["deal"], error["play"]) == ("missing_plays", 0, 1)
