"""Places kept for categories among the lines going on (``algorithms.qualification``)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.algorithms.qualification import KeptPlacesError, qualifiers

# A 12-line open's ranking, best first: lines 1..12 with their categories.
RANKING = [
    (1, "men"),
    (2, "mixed"),
    (3, "men"),
    (4, "men"),
    (5, "women"),
    (6, "men"),
    (7, "mixed"),
    (8, "men"),
    (9, "women"),
    (10, "over-63"),
    (11, "women"),
    (12, "over-63"),
]


def test_the_top_eight_with_two_places_kept_for_women_and_one_for_over_63():
    # Worked by hand: women's best two are 5 (already 5th) and 9 (9th); over-63's best is 10.
    # Kept: 5, 9, 10; the five places left go to 1, 2, 3, 4, 6; 7 and 8 stay out.
    going = qualifiers(RANKING, 8, {"women": 2, "over-63": 1})
    assert going == [1, 2, 3, 4, 5, 6, 9, 10]


def test_no_places_kept_is_the_top_of_the_ranking():
    assert qualifiers(RANKING, 4, {}) == [1, 2, 3, 4]


def test_a_category_with_fewer_lines_than_its_places_sends_them_all_and_frees_the_rest():
    going = qualifiers(RANKING, 4, {"over-63": 3})
    assert going == [1, 2, 10, 12]


def test_more_places_kept_than_places_is_refused():
    with pytest.raises(KeptPlacesError):
        qualifiers(RANKING, 3, {"women": 2, "mixed": 2})


CATEGORIES = ["men", "women", "mixed", "over-63", "Comune di Bari"]


@st.composite
def cases(draw):
    cats = draw(st.lists(st.sampled_from(CATEGORIES), min_size=1, max_size=40))
    ranked = list(enumerate(cats, start=1))
    places = draw(st.integers(min_value=0, max_value=len(ranked)))
    kept = draw(st.dictionaries(st.sampled_from(CATEGORIES), st.integers(min_value=1, max_value=4)))
    if sum(kept.values()) > places:
        kept = {}
    return ranked, places, kept


@given(cases())
def test_kept_places_properties(case):
    ranked, places, kept = case
    going = qualifiers(ranked, places, kept)
    rank = {line: index for index, (line, _cat) in enumerate(ranked)}
    category = dict(ranked)
    # as many lines as places, in ranking order, none twice
    assert len(going) == places == len(set(going))
    assert going == sorted(going, key=rank.__getitem__)
    # each category has its kept places (or all its lines)
    for cat, count in kept.items():
        in_category = [line for line, c in ranked if c == cat]
        assert sum(1 for line in going if category[line] == cat) >= min(count, len(in_category))
    # a line left out above one that went on: that one holds a kept place of its category,
    # being among its category's best ``kept`` lines
    out = [line for line, _cat in ranked if line not in going]
    for line in going:
        if any(rank[o] < rank[line] for o in out):
            cat = category[line]
            best = [x for x, c in ranked if c == cat][: kept.get(cat, 0)]
            assert line in best
