"""The deal-sheet referee: what a hand-entered deal can hold, and the one match-end rule on sheets.

The scope bounds are shown to be reached by records the verifier accepts, and one more is refused.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scopa import CARD_INDEX, Options, rules_for, simulate_match, verify_document
from scopa.match_end import EndRule, SheetDeal, SheetRefused, judge_sheet
from scopa.rules import legal_takes
from scopa.sheet import DealSheet, check_deal, scope_bound
from scopa.state import DealState
from scopa.variants import VARIANTS, get_variant

CODES = {index: code for code, index in CARD_INDEX.items()}


def _record_from_plays(variant, dealer, table, cards):
    """A one-deal, two-seat record whose deal plays `cards` in this order, each capture taking
    the whole table when it can (the deck is arranged so that each seat holds its cards)."""
    deck_codes = cards[:6] + table + cards[6:]
    deck = [CARD_INDEX[c] for c in deck_codes]
    rules = rules_for(variant, Options.for_variant(variant))
    state = DealState(rules, 2, 2, dealer, deck)
    plays = []
    for code in cards:
        card = CARD_INDEX[code]
        takes = legal_takes(rules, card, state.table)
        take = max(takes, key=len)
        plays.append({"card": code, "take": [CODES[c] for c in take]})
        state.apply(card, take)
    return {
        "schema": "scopa-match/1",
        "variant": variant,
        "end": {"deals": 1},
        "seats": ["a", "b"],
        "deals": [{"dealer": dealer, "deck": deck_codes, "plays": plays}],
    }


def _pairs(ranks, suits="DCBS"):
    return [f"{rank}{suit}" for rank in ranks for suit in suits]


def test_eighteen_scope_for_the_first_hand_in_classic_scopa():
    """Seat 1 (after the dealer) takes 1+1+2+2 with a 6, then every card seat 0 lays down on the
    empty table with the same rank: a scopa on each of its 18 plays (1, 3, ..., 35)."""
    table = ["1C", "1B", "2C", "2B"]
    pairs = [
        ("1D", "1S"),
        ("2D", "2S"),
        ("6D", "6B"),
        *[(f"{rank}{a}", f"{rank}{b}") for rank in (3, 4, 5, 7, 8, 9, 10) for a, b in ("DC", "BS")],
    ]
    assert len(pairs) == 17
    cards = ["6C"]
    for laid, taken in pairs:
        cards += [laid, taken]
    cards.append("6S")
    # play order: seat 1, seat 0, ...; each round deals 3 + 3 cards in the same order
    doc = _record_from_plays("scopa", 0, table, cards)
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    scope = [side["scope"] for side in verdict["deals"][0]["breakdown"]]
    assert scope == [0, 18]
    assert scope_bound("scopa", 2).per_side == 18
    assert not check_deal("scopa", {}, 2, DealSheet(({}, {"scope": 18})))
    assert [e.code for e in check_deal("scopa", {}, 2, DealSheet(({}, {"scope": 19})))] == [
        "scope_side"
    ]


def test_fourteen_scope_in_scopa_15():
    """The dealer's fifteen of 30 (two scope), ten pairs making 15, then two sets of small cards:
    14 scope, and the six cards left add up to 10 (220 = 14 x 15 + 10)."""
    table = ["10C", "10B", "5C", "5B"]
    pairs = [
        ("5D", "10D"),
        ("5S", "10S"),
        *[(f"6{s}", f"9{s}") for s in "DCBS"],
        *[(f"7{s}", f"8{s}") for s in "DCBS"],
    ]
    cards = []
    for laid, taken in pairs:
        cards += [laid, taken]
    cards += ["4C", "4B", "4D", "3C"]
    cards += ["4S", "3B", "3D", "2C", "2B", "1C"]
    cards += ["1B", "1D", "1S", "2D", "2S", "3S"]
    assert len(cards) == 36
    doc = _record_from_plays("scopa-15", 0, table, cards)
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    scope = [side["scope"] for side in verdict["deals"][0]["breakdown"]]
    assert scope == [14, 0]
    assert scope_bound("scopa-15", 2).total == 14
    assert not check_deal("scopa-15", {}, 2, DealSheet(({"scope": 14}, {})))
    assert check_deal("scopa-15", {}, 2, DealSheet(({"scope": 15}, {})))
    assert check_deal("scopa-15", {}, 2, DealSheet(({"scope": 8}, {"scope": 7})))


def test_scope_of_both_sides_cost_a_play_when_the_scopa_changes_side():
    """Two sides alternate: a scopa of the other side needs an odd gap of 3 plays at least."""
    assert not check_deal("scopa", {}, 2, DealSheet(({"scope": 9}, {"scope": 8})))
    assert [
        e.code for e in check_deal("scopa", {}, 2, DealSheet(({"scope": 10}, {"scope": 8})))
    ] == ["scope_combination"]
    # the penalty's extra scopa comes on top of what the deal allows
    assert not check_deal("scopa", {}, 2, DealSheet(({"scope": 19}, {}), penalty=True, offender=1))
    assert check_deal("scopa", {}, 2, DealSheet(({"scope": 19}, {}), penalty=True, offender=0))


ONE_SIDE = {
    "scopa": ["carte", "denari", "settebello", "primiera", "rebello", "napola"],
    "scopa-d-assi": ["carte", "denari", "settebello", "primiera", "rebello", "napola"],
    "scopa-15": ["denari", "settebello", "sette", "carte", "poche_carte"],
}
ALL_OPTIONS = {"rebello": True, "napola": True}


def _points(key):
    return {"napola": 3, "poche_carte": 2}.get(key, 1)


@pytest.mark.parametrize(("variant", "key"), [(v, k) for v, keys in ONE_SIDE.items() for k in keys])
def test_a_one_side_category_given_to_both_sides_is_refused(variant, key):
    sheet = DealSheet(({key: _points(key)}, {key: _points(key)}))
    errors = check_deal(variant, ALL_OPTIONS, 2, sheet)
    assert "both_sides" in [e.code for e in errors]
    message = errors[-1].message("it")
    assert "entrambe" in message and errors[-1].message("en")


@pytest.mark.parametrize(
    ("variant", "breakdown", "code"),
    [
        ("scopa", {"carte": 5}, "too_many"),
        ("scopa", {"denari": 3}, "too_many"),
        ("scopa", {"scope": 40}, "scope_side"),
        ("scopa-d-assi", {"primiera": 2}, "too_many"),
        ("scopa-15", {"denari": 3}, "too_many"),
        ("scopa-15", {"sette": 3}, "too_many"),
        ("scopa-15", {"poche_carte": 3}, "too_many"),
        ("scopa-15", {"primiera": 1}, "unknown_category"),
        ("scopa-15", {"rebello": 1}, "unknown_category"),
        ("scopa", {"sette": 1}, "unknown_category"),
        ("scopa", {"rebello": 1}, "unknown_category"),  # option off
        ("scopa", {"other": 1}, "unknown_category"),
    ],
)
def test_more_than_a_category_gives_or_unknown_categories(variant, breakdown, code):
    errors = check_deal(variant, {}, 2, DealSheet((breakdown, {})))
    assert [e.code for e in errors] == [code]
    assert errors[0].message("it") != errors[0].message("en")


def test_napola_values_and_what_they_bring():
    options = {"napola": True, "rebello": True}
    assert [e.code for e in check_deal("scopa", options, 2, DealSheet(({"napola": 2}, {})))] == [
        "impossible_value"
    ]
    errors = check_deal("scopa", options, 2, DealSheet(({"napola": 7, "denari": 1}, {})))
    assert [e.code for e in errors] == ["implied"]
    assert "settebello" in errors[0].message("it", ["Rossi", "Bianchi"])
    whole = {"napola": 10, "denari": 1, "settebello": 1, "rebello": 1}
    assert not check_deal("scopa", options, 2, DealSheet((whole, {})))


def test_sentences_name_the_lines_in_both_languages():
    error = check_deal("scopa", {}, 2, DealSheet(({}, {"carte": 5})))[0]
    assert error.message("it", ["Rossi", "Bianchi"]).startswith("Bianchi, Carte: 5 punti")
    assert error.message("en", ["Rossi", "Bianchi"]).startswith("Bianchi, Cards: 5 points")


variants = st.sampled_from(sorted(VARIANTS))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), variant=variants, seats=st.sampled_from([2, 4, 6]))
def test_property_any_one_side_category_to_both_sides_is_refused(data, variant, seats):
    entry = get_variant(variant)
    options = dict(ALL_OPTIONS)
    candidates = [c for c in entry.categories(options) if c.key in ONE_SIDE[variant]]
    category = data.draw(st.sampled_from(candidates))
    breakdown = []
    for _side in range(2):
        row = {category.key: _points(category.key)}
        for other in entry.categories(options):
            if other.key != category.key and data.draw(st.booleans()):
                row.setdefault(other.key, 0)
        breakdown.append({k: v for k, v in row.items() if v})
    errors = check_deal(variant, options, seats, DealSheet(tuple(breakdown)))
    assert "both_sides" in [e.code for e in errors]


def sheet_from_verdict(verdict):
    deals = []
    for entry in verdict["deals"]:
        if entry.get("void"):
            continue
        deals.append(entry)
    return deals


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    variant=variants,
    seats=st.sampled_from([2, 4]),
    end=st.sampled_from([{"target": 11}, {"target": 21}, {"deals": 3}, {"deals": 1}]),
    knockout=st.booleans(),
    napola=st.booleans(),
)
def test_property_simulated_deals_pass_the_referee_and_the_match_end_rule(
    seed, variant, seats, end, knockout, napola
):
    """Every deal of a legal record, as its verdict scores it, is a sheet the referee accepts,
    and the sheet's deals give the verdict's winner, totals and margin."""
    options = {"napola": napola, "rebello": napola}
    doc = simulate_match(
        variant=variant, seats=seats, end=end, knockout=knockout, seed=seed, options=options
    )
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    sheet = []
    for entry in sheet_from_verdict(verdict):
        breakdown = tuple({k: v for k, v in side.items() if v} for side in entry["breakdown"])
        assert check_deal(variant, doc["options"], seats, DealSheet(breakdown)) == []
        sheet.append(SheetDeal(tuple(entry["points"]), entry["tiebreak"]))
    if verdict["end"]["reason"] in ("no_capture", "tiebreak_last_capture"):
        return  # a sheet does not say who captured (or last): the desk asks for it instead
    rule = EndRule(end.get("target"), end.get("deals"), knockout, 2, variant == "scopa-15")
    judged = judge_sheet(rule, sheet)
    assert judged.winner == verdict["winner"]
    assert list(judged.totals) == verdict["totals"]
    assert judged.margin == verdict["margin"]


class TestSheetsAndTheMatchEndRule:
    rule = EndRule(target=11, knockout=True)

    def test_timed_knockout_tie_goes_to_the_tie_break_deals(self):
        level = [SheetDeal((3, 3)), SheetDeal((2, 2))]
        with pytest.raises(SheetRefused) as refused:
            judge_sheet(self.rule, level, time_expired=True)
        assert refused.value.problem.code == "knockout_level"
        judged = judge_sheet(
            self.rule, [*level, SheetDeal((1, 2), tiebreak=True)], time_expired=True
        )
        assert judged.winner == 1 and judged.reason == "tiebreak" and judged.totals == (6, 7)
        # a third regular deal is read as the deal in which time ran out
        judged = judge_sheet(self.rule, [*level, SheetDeal((1, 2))], time_expired=True)
        assert judged.reason == "time_limit" and judged.winner == 1

    def test_timed_group_tie_plays_on(self):
        rule = EndRule(target=21)
        judged = judge_sheet(
            rule, [SheetDeal((3, 3)), SheetDeal((2, 2)), SheetDeal((1, 2))], time_expired=True
        )
        assert judged.winner == 1 and judged.reason == "time_limit"

    def test_penalty_sheet(self):
        rule = EndRule(target=11)
        deals = [SheetDeal((5, 2)), SheetDeal((0, 3), penalty=True)]
        judged = judge_sheet(rule, deals, outcome="timeout", offender=0)
        assert judged.winner == 1 and judged.margin == 0 and judged.totals == (5, 5)
