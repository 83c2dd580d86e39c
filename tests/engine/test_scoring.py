"""Deal scores: the classic points, primiera and its missing-suit option, rebello, napola, the
scopa-15 points, and which points a timeout leaves secured."""

import pytest

from scopa import CARD_INDEX, Options, rules_for
from scopa.cards import mask_of
from scopa.scoring import (
    interrupted_deal,
    napola_run,
    primiera_of,
    primiera_winner,
    score_deal,
)

C = CARD_INDEX


def mask(*codes):
    return mask_of(C[c] for c in codes)


def rest(*masks):
    taken = 0
    for m in masks:
        taken |= m
    return ((1 << 40) - 1) & ~taken


def rules(variant="scopa", **options):
    return rules_for(variant, Options.for_variant(variant, options))


@pytest.mark.parametrize(
    ("rank", "value"),
    [(7, 21), (6, 18), (1, 16), (5, 15), (4, 14), (3, 13), (2, 12), (8, 10), (9, 10), (10, 10)],
)
def test_primiera_values(rank, value):
    assert primiera_of(mask(f"{rank}C")) == (1, value)


def test_primiera_counts_best_card_of_each_suit():
    assert primiera_of(mask("7D", "6D", "1C", "5B", "10S", "2S")) == (4, 21 + 16 + 15 + 12)


def test_primiera_side_missing_a_suit_loses_even_with_higher_sum():
    full_low = mask("10D", "10C", "10B", "10S")  # 40, all suits
    missing = mask("7D", "7C", "7B")  # 63, no spade
    assert primiera_winner([full_low, missing], compare_present=False) == 0
    assert primiera_winner([full_low, missing], compare_present=True) == 0


def test_primiera_every_side_missing_a_suit_both_readings():
    a = mask("7D", "7C", "2B")  # no spade: 54
    b = mask("6D", "6C", "6S")  # no bastoni: 54 + ... = 54
    c = mask("7S", "1C")  # 37
    assert primiera_winner([a, c], compare_present=False) is None
    assert primiera_winner([a, c], compare_present=True) == 0
    assert primiera_winner([a, b], compare_present=True) is None  # 54 each: tie


def test_primiera_tie_goes_to_nobody():
    assert primiera_winner([mask("7D", "7C", "7B", "7S"), mask("6D", "6C", "6B", "7S")], False) == 0
    assert (
        primiera_winner([mask("7D", "6C", "7B", "1S"), mask("6D", "7C", "1B", "7S")], False) is None
    )


def test_classic_points_two_sides():
    side0 = mask(*(f"{r}D" for r in range(1, 11)), "7C", "7B", "7S", *(f"{r}C" for r in (1, 2, 3)))
    side0 |= mask(*(f"{r}B" for r in range(1, 7)))
    side1 = rest(side0)
    points, breakdown = score_deal(rules(), [side0, side1], [2, 1])
    assert side0.bit_count() == 22
    assert breakdown[0] == {"scope": 2, "carte": 1, "denari": 1, "settebello": 1, "primiera": 1}
    assert points[0] == sum(breakdown[0].values())
    assert breakdown[1]["scope"] == 1


def test_carte_needs_21_and_ties_score_nothing():
    half = mask(*(f"{r}{s}" for s in "DC" for r in range(1, 11)))
    _points, breakdown = score_deal(rules(), [half, rest(half)], [0, 0])
    assert breakdown[0]["carte"] == breakdown[1]["carte"] == 0
    assert breakdown[0]["denari"] == 1


def test_denari_five_five_scores_nothing():
    side0 = mask("1D", "2D", "3D", "4D", "5D")
    _, breakdown = score_deal(rules(), [side0, rest(side0)], [0, 0])
    assert breakdown[0]["denari"] == breakdown[1]["denari"] == 0


def test_rebello_option():
    side0 = mask("10D")
    _, off = score_deal(rules(), [side0, rest(side0)], [0, 0])
    _, on = score_deal(rules(rebello=True), [side0, rest(side0)], [0, 0])
    assert "rebello" not in off[0]
    assert on[0]["rebello"] == 1 and on[1]["rebello"] == 0


@pytest.mark.parametrize(
    ("denari", "points"),
    [
        ((1, 2), 0),
        ((1, 2, 3), 3),
        ((1, 2, 3, 4), 4),
        ((1, 2, 3, 4, 5), 5),
        ((1, 2, 3, 5, 6), 3),
        (tuple(range(1, 11)), 10),
        ((2, 3, 4, 5), 0),
    ],
)
def test_napola(denari, points):
    side0 = mask(*(f"{r}D" for r in denari))
    _, breakdown = score_deal(rules(napola=True), [side0, rest(side0)], [0, 0])
    assert breakdown[0]["napola"] == points
    assert napola_run(side0) >= (points if points >= 3 else 0)


def test_three_sides_strict_most_else_nobody():
    a = mask(*(f"{r}D" for r in range(1, 5)), *(f"{r}C" for r in range(1, 10)))  # 13 cards, 4 D
    b = mask(*(f"{r}D" for r in range(5, 9)), *(f"{r}B" for r in range(1, 10)))  # 13 cards, 4 D
    c = rest(a, b)  # 14 cards, 2 D
    _points, breakdown = score_deal(rules(), [a, b, c], [0, 0, 0])
    assert [bd["denari"] for bd in breakdown] == [0, 0, 0]
    assert [bd["carte"] for bd in breakdown] == [0, 0, 1]


class TestScopa15Points:
    def test_all_sevens_make_three_in_all_and_all_denari_two(self):
        side0 = mask(*(f"{r}D" for r in range(1, 11)), "7C", "7B", "7S")
        side1 = rest(side0)
        points, breakdown = score_deal(rules("scopa-15"), [side0, side1], [1, 0])
        assert breakdown[0]["settebello"] + breakdown[0]["sette"] == 3
        assert breakdown[0]["denari"] == 2
        assert breakdown[0]["carte"] == 0 and breakdown[1]["carte"] == 1
        assert breakdown[0]["poche_carte"] == 0 and breakdown[1]["poche_carte"] == 0
        assert points == [1 + 2 + 3, 1]

    def test_fewer_than_ten_cards_gives_each_opponent_two(self):
        side0 = mask("1C", "2C", "3C")
        _, breakdown = score_deal(rules("scopa-15"), [side0, rest(side0)], [0, 0])
        assert breakdown[1]["poche_carte"] == 2 and breakdown[0]["poche_carte"] == 0
        three = [side0, mask("4C"), rest(side0, mask("4C"))]
        _, breakdown = score_deal(rules("scopa-15"), three, [0, 0, 0])
        assert [b["poche_carte"] for b in breakdown] == [2, 2, 4]

    def test_most_sevens(self):
        side0 = mask("7C", "7B")
        _, breakdown = score_deal(rules("scopa-15"), [side0, rest(side0)], [0, 0])
        assert breakdown[0]["sette"] == 0 and breakdown[1]["sette"] == 0


class TestSecuredPoints:
    """docs/match-record.md, "Timeout and abandon": a point is secured when its owner is the same
    however the loose cards go."""

    def test_settebello_and_six_denari_are_secured_others_go_to_the_opponent(self):
        side0 = mask("7D", "1D", "2D", "4D", "5D", "6D")
        side1 = mask("3C")
        loose = rest(side0, side1)
        _points, breakdown, unsecured = interrupted_deal(rules(), [side0, side1], [1, 0], loose)
        assert breakdown[0]["settebello"] == 1 and breakdown[0]["denari"] == 1
        assert breakdown[0]["scope"] == 1
        assert sorted(c for c, _ in unsecured) == ["carte", "primiera"]

    def test_denari_five_five_all_captured_is_secured_for_nobody(self):
        side0 = mask("1D", "2D", "3D", "4D", "5D")
        side1 = mask("6D", "7D", "8D", "9D", "10D")
        loose = rest(side0, side1)
        _, breakdown, unsecured = interrupted_deal(rules(), [side0, side1], [0, 0], loose)
        assert "denari" not in [c for c, _ in unsecured]
        assert breakdown[0]["denari"] == breakdown[1]["denari"] == 0
        assert breakdown[1]["settebello"] == 1

    def test_carte_secured_at_21(self):
        side0 = mask(*(f"{r}{s}" for s in "CBS" for r in range(1, 8)))  # 21 cards
        _, breakdown, unsecured = interrupted_deal(rules(), [side0, 0], [0, 0], rest(side0))
        assert breakdown[0]["carte"] == 1 and "carte" not in [c for c, _ in unsecured]

    def test_napola_counts_point_by_point(self):
        side0 = mask("1D", "2D", "3D", "4D")
        side1 = mask("6D")
        loose = rest(side0, side1)
        _, breakdown, unsecured = interrupted_deal(
            rules(napola=True), [side0, side1], [0, 0], loose
        )
        assert breakdown[0]["napola"] == 4
        napola = [v for c, v in unsecured if c == "napola"]
        assert napola == [1]  # only the 5th denaro can still go either way; 6D on breaks the run


def test_direct_classic_scoring_equals_the_sum_of_units():
    import random

    from scopa.scoring import _score_from_units

    rng = random.Random(4)
    for variant, options in (
        ("scopa", {}),
        ("scopa", {"rebello": True, "napola": True}),
        ("scopa-d-assi", {"primiera_missing_suit": "compare_present"}),
    ):
        for sides in (2, 3):
            for _ in range(300):
                owner = [rng.randrange(sides) for _ in range(40)]
                masks = [sum(1 << c for c in range(40) if owner[c] == s) for s in range(sides)]
                scope = [rng.randrange(3) for _ in range(sides)]
                r = rules(variant, **options)
                assert score_deal(r, masks, scope) == _score_from_units(r, masks, scope)
