"""Prize allocation: hand-worked examples and the federations' rule as hypothesis properties."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.algorithms.prizes import (
    OVERALL,
    PrizeSpec,
    RankedLine,
    allocate,
    categories_of,
    category_ranking,
    eligible,
    handing_order,
)


def _ranking(*categories):
    return [RankedLine(line=i, rank=i, category=c) for i, c in enumerate(categories, start=1)]


def test_a_line_takes_only_its_best_prize():
    # line 1 is a woman and wins overall: the women's first prize goes to the next woman (3)
    ranking = _ranking("women", "men", "women", "women")
    prizes = [
        PrizeSpec(key=10, value=500, place=1),
        PrizeSpec(key=11, value=300, place=2),
        PrizeSpec(key=20, value=200, place=1, category="women"),
        PrizeSpec(key=21, value=100, place=2, category="women"),
    ]
    assert allocate(prizes, ranking) == {10: 1, 11: 2, 20: 3, 21: 4}


def test_a_category_prize_worth_more_is_handed_out_first():
    # the women's first prize (worth 400) is handed out before the 2nd overall (300): line 1
    # took the overall 1st, so the best woman left is line 2, and the 2nd overall goes to 3
    ranking = _ranking("men", "women", "men")
    prizes = [
        PrizeSpec(key=1, value=500, place=1),
        PrizeSpec(key=2, value=300, place=2),
        PrizeSpec(key=3, value=400, place=1, category="women"),
    ]
    assert allocate(prizes, ranking) == {1: 1, 3: 2, 2: 3}


def test_a_prize_no_line_is_left_for_goes_to_nobody():
    ranking = _ranking("men")
    prizes = [PrizeSpec(1, 100, 1), PrizeSpec(2, 50, 1, "women"), PrizeSpec(3, 40, 2)]
    assert allocate(prizes, ranking) == {1: 1, 2: None, 3: None}


def test_category_ranking_renumbers_and_keeps_shared_ranks():
    ranking = [
        RankedLine(1, 1, "men"),
        RankedLine(2, 2, "women"),
        RankedLine(3, 2, "women"),
        RankedLine(4, 4, "women"),
        RankedLine(5, 5, ""),
    ]
    assert [(x.line, x.rank) for x in category_ranking(ranking, "women")] == [
        (2, 1),
        (3, 1),
        (4, 3),
    ]
    assert categories_of(ranking) == ["men", "women"]


CATEGORIES = st.sampled_from(["", "men", "women", "over-63"])


@st.composite
def _cases(draw):
    cats = draw(st.lists(CATEGORIES, max_size=12))
    ranking = _ranking(*cats)
    prizes = [
        PrizeSpec(key=k, value=draw(st.integers(0, 5)), place=draw(st.integers(1, 3)), category=c)
        for k, c in enumerate(
            draw(st.lists(st.sampled_from([OVERALL, "men", "women"]), max_size=10))
        )
    ]
    return prizes, ranking


@settings(max_examples=200, deadline=None)
@given(_cases())
def test_no_line_gets_two_prizes(case):
    prizes, ranking = case
    winners = [line for line in allocate(prizes, ranking).values() if line is not None]
    assert len(winners) == len(set(winners))


@settings(max_examples=200, deadline=None)
@given(_cases())
def test_each_prize_goes_to_the_best_eligible_line_not_yet_awarded(case):
    prizes, ranking = case
    allocation = allocate(prizes, ranking)
    awarded: set[int] = set()
    for prize in handing_order(prizes):
        left = [x.line for x in ranking if x.line not in awarded and eligible(prize, x)]
        assert allocation[prize.key] == (left[0] if left else None)
        if left:
            awarded.add(left[0])
    # and in value order: no prize is handed out after a less valuable one
    values = [p.value for p in handing_order(prizes)]
    assert values == sorted(values, reverse=True)
