"""Every error code: unreadable records (RecordError) and illegal ones, with their positions."""

import json
from pathlib import Path

import pytest

from scopa import RecordError, parse_record, verify_document
from scopa.errors import PLAY_MESSAGES, RECORD_MESSAGES

from .helpers import arrange_deck, clone, first_deal_record, record, sim

BASE = sim(seed=11)


def malformed(doc) -> dict:
    verdict = verify_document(doc if isinstance(doc, bytes | str) else json.dumps(doc))
    assert verdict["valid"] is False and verdict.get("malformed") is True, verdict
    return verdict["errors"][0]


@pytest.mark.parametrize(
    ("mutate", "code", "field"),
    [
        (lambda d: d.pop("deals"), "missing_field", "deals"),
        (lambda d: d.update(extra=1), "unknown_field", "extra"),
        (lambda d: d.update(schema="scopa-match/2"), "unknown_schema", "schema"),
        (lambda d: d.update(variant="scopone"), "unknown_variant", "variant"),
        (lambda d: d["options"].update(rebelo=True), "unknown_option", "options.rebelo"),
        (lambda d: d["options"].update(rebello="yes"), "option_type", "options.rebello"),
        (
            lambda d: d["options"].update(primiera_missing_suit="x"),
            "option_type",
            "options.primiera_missing_suit",
        ),
        (lambda d: d["deals"][2].update(dealer="1"), "wrong_type", "deals[2].dealer"),
        (lambda d: d["deals"][2]["deck"].__setitem__(5, "11D"), "unknown_card", "deals[2].deck[5]"),
        (
            lambda d: d["deals"][1]["deck"].__setitem__(7, d["deals"][1]["deck"][3]),
            "duplicate_card",
            "deals[1].deck[7]",
        ),
        (lambda d: d["deals"][0]["deck"].pop(), "deck_size", "deals[0].deck"),
        (lambda d: d["seats"].extend(["x", "y", "z"]), "seat_count", "seats"),
        (lambda d: d["deals"][0].update(dealer=2), "seat_out_of_range", "deals[0].dealer"),
        (
            lambda d: d["deals"][0]["plays"][3].update(seat=-1),
            "seat_out_of_range",
            "deals[0].plays[3].seat",
        ),
        (
            lambda d: d["deals"][0]["plays"][3].update(card="7X"),
            "unknown_card",
            "deals[0].plays[3].card",
        ),
        (
            lambda d: d["deals"][0].update(declared=[1, 2, 3]),
            "declared_length",
            "deals[0].declared",
        ),
        (lambda d: d.update(end={"target": 11, "deals": 3}), "invalid_value", "end"),
        (lambda d: d.update(end={"target": 0}), "invalid_value", "end.target"),
        (lambda d: d.update(outcome={"kind": "timeout"}), "missing_field", "outcome.seat"),
        (lambda d: d.update(outcome={"kind": "resign"}), "invalid_value", "outcome.kind"),
    ],
)
def test_unreadable_records_name_the_field(mutate, code, field):
    doc = clone(BASE)
    mutate(doc)
    error = malformed(doc)
    assert (error["code"], error["field"]) == (code, field)
    assert error["messages"]["it"] and error["messages"]["en"]
    with pytest.raises(RecordError) as raised:
        parse_record(json.dumps(doc))
    assert raised.value.code == code and raised.value.field == field


@pytest.mark.parametrize(
    "data", [b"", b"{", b"\xff\xfe", '{"schema": NaN}', b"null", b"[]", b"1e999"]
)
def test_not_json_or_not_an_object(data):
    assert malformed(data)["code"] in ("invalid_json", "wrong_type", "invalid_value")


def test_an_option_of_another_variant_is_accepted():
    doc = clone(BASE)
    doc["options"]["forced_capture"] = False
    assert verify_document(doc)["valid"]


def test_an_internal_failure_still_raises_record_error(monkeypatch):
    import scopa.record as record_module

    def boom(raw):
        raise ZeroDivisionError

    monkeypatch.setattr(record_module, "_build", boom)
    with pytest.raises(RecordError) as raised:
        parse_record(json.dumps(BASE))
    assert raised.value.code == "unreadable"


def first_error(doc, lang="it"):
    verdict = verify_document(doc, lang)
    assert verdict["valid"] is False and not verdict.get("malformed"), verdict
    assert verdict["winner"] is None
    error = verdict["errors"][0]
    return error["code"], error["deal"], error["play"]


def test_wrong_dealer_rotation():
    doc = clone(BASE)
    doc["deals"][1]["dealer"] = doc["deals"][0]["dealer"]
    assert first_error(doc) == ("wrong_dealer", 1, None)


def test_void_rules():
    three_kings = ["10D", "10C", "10B", "5S"]
    deck = arrange_deck(2, 0, {}, three_kings)
    doc = record([{"dealer": 0, "deck": deck, "plays": [{"card": deck[1], "take": []}]}])
    assert first_error(doc) == ("must_be_void", 0, None)
    doc["deals"][0]["void"] = True
    assert first_error(doc) == ("void_with_plays", 0, 0)
    doc["deals"][0]["plays"] = []
    # void accepted; the same dealer deals again, so a new dealer is a rotation error
    doc["deals"].append(clone(BASE["deals"][0]) | {"dealer": 1})
    assert first_error(doc)[0] == "wrong_dealer"
    doc = clone(BASE)
    doc["deals"][0]["void"] = True
    doc["deals"][0].pop("plays")
    assert first_error(doc) == ("not_void", 0, None)


def test_three_kings_with_the_option_off_is_played():
    deck = arrange_deck(2, 0, {}, ["10D", "10C", "10B", "5S"])
    doc = record([{"dealer": 0, "deck": deck, "plays": []}], options={"void_three_kings": False})
    assert first_error(doc) == ("missing_plays", 0, 0)


@pytest.mark.parametrize(
    "table",
    [["10D", "10C", "10B", "10S"], ["10D", "3C", "10B", "10S"], ["10D", "10C", "10B", "7S"]],
)
def test_three_or_four_kings_void_then_redeal_by_the_same_dealer_is_legal(table):
    match = sim(seed=5)
    dealer = match["deals"][0]["dealer"]
    deck = arrange_deck(2, dealer, {}, table)
    match["deals"].insert(0, {"dealer": dealer, "deck": deck, "void": True})
    verdict = verify_document(match)
    assert verdict["valid"], verdict["errors"]
    zero = {"scope": 0, "carte": 0, "denari": 0, "settebello": 0, "primiera": 0}
    assert verdict["deals"][0] == {
        "points": [0, 0],
        "breakdown": [zero, zero],
        "tiebreak": False,
        "void": True,
    }


def test_wrong_seat():
    doc = clone(BASE)
    play = doc["deals"][0]["plays"][4]
    play["seat"] = 1 - play["seat"]
    assert first_error(doc) == ("wrong_seat", 0, 4)


def test_card_not_in_hand():
    doc = first_deal_record(
        {0: ["8S", "1C", "2C"]},
        ["5D", "3B", "8C", "9S"],
        [
            {"card": "4S", "take": []},
        ],
    )
    assert first_error(doc) == ("card_not_in_hand", 0, 0)


@pytest.mark.parametrize(
    ("hand", "table", "play", "code", "variant"),
    [
        (
            ["8S", "1C", "2C"],
            ["5D", "3B", "8C", "9S"],
            {"card": "8S", "take": ["4D"]},
            "take_not_on_table",
            "scopa",
        ),
        (
            ["8S", "1C", "2C"],
            ["5D", "3B", "8C", "9S"],
            {"card": "8S", "take": ["5D", "3B"]},
            "must_take_equal_rank",
            "scopa",
        ),
        (
            ["8S", "1C", "2C"],
            ["5D", "2B", "6C", "9S"],
            {"card": "8S", "take": ["5D", "2B"]},
            "wrong_sum",
            "scopa",
        ),
        (
            ["8S", "1C", "2C"],
            ["5D", "3B", "6C", "9S"],
            {"card": "8S", "take": []},
            "must_capture",
            "scopa",
        ),
        (
            ["1S", "4C", "2C"],
            ["5D", "3B", "6C", "9S"],
            {"card": "1S", "take": ["5D"]},
            "ace_must_take_all",
            "scopa-d-assi",
        ),
        (
            ["8S", "1C", "2C"],
            ["5D", "3B", "6C", "9S"],
            {"card": "8S", "take": ["5D"]},
            "wrong_fifteen",
            "scopa-15",
        ),
        (
            ["8S", "1C", "2C"],
            ["7D", "3B", "6C", "9S"],
            {"card": "8S", "take": []},
            "must_capture",
            "scopa-15",
        ),
    ],
)
def test_capture_errors(hand, table, play, code, variant):
    doc = first_deal_record({0: hand}, table, [play], variant=variant)
    assert first_error(doc) == (code, 0, 0)
    assert first_error(doc, "en")[0] == code


def test_missing_and_extra_plays():
    doc = clone(BASE)
    del doc["deals"][1]["plays"][20:]
    assert first_error(doc) == ("missing_plays", 1, 20)
    doc = clone(BASE)
    doc["deals"][1]["plays"].append(doc["deals"][1]["plays"][0])
    assert first_error(doc) == ("extra_plays", 1, 36)


def test_missing_and_extra_deals():
    doc = clone(BASE)
    doc["deals"].pop()
    assert first_error(doc) == ("missing_deals", len(doc["deals"]), None)
    doc = clone(BASE)
    doc["deals"].append(clone(doc["deals"][0]))
    assert first_error(doc) == ("extra_deals", len(BASE["deals"]), None)


def test_outcome_after_the_end():
    doc = clone(BASE)
    doc["outcome"] = {"kind": "abandon", "seat": 0}
    assert first_error(doc) == ("outcome_after_end", len(doc["deals"]), None)


def test_timeout_by_a_seat_not_to_move():
    doc = sim(seed=3, outcome={"kind": "timeout", "seat": 1, "deal": 1, "play": 10})
    assert verify_document(doc)["valid"]
    doc["outcome"]["seat"] = 0
    last = len(doc["deals"]) - 1
    assert first_error(doc) == ("timeout_not_on_turn", last, len(doc["deals"][last]["plays"]))


def test_every_code_has_both_languages():
    for catalog in (PLAY_MESSAGES, RECORD_MESSAGES):
        for code, (italian, english) in catalog.items():
            assert italian and english and italian != english, code


def test_every_code_is_exercised_by_a_test():
    here = Path(__file__).parent
    text = "".join(path.read_text() for path in here.glob("test_*.py"))
    for code in (*PLAY_MESSAGES, *RECORD_MESSAGES):
        assert f'"{code}"' in text, code
