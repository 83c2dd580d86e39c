"""Who goes on from a ranking when some places are kept for categories.

Italian opens often send the top N of the ranking to the final phase "with at least two
women's pairs" or "the best over-63 pair": places kept for a category within the N, not added
to it (a knock-out's size is fixed). Plain functions over plain data (no Django).

The rule, as an arbiter applies it: each category's best lines fill the places kept for it
(all of them when it has fewer); the places left go to the best lines of the ranking not yet
in. The lines going on keep their order in the ranking, which seeds the next stage, so a line
that came in on a kept place is seeded where it ranked.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

logger = logging.getLogger(__name__)

L = TypeVar("L", bound=Hashable)


class KeptPlacesError(ValueError):
    """The places kept for categories are more than the places there are."""


def qualifiers(ranked: Sequence[tuple[L, str]], places: int, kept: Mapping[str, int]) -> list[L]:
    """The lines going on, best first: ``ranked`` holds each line with its category (best
    first), ``places`` how many go on, ``kept`` the places kept for each category."""
    asked = sum(count for count in kept.values() if count > 0)
    if asked > places:
        raise KeptPlacesError(asked, places)
    going: set[L] = set()
    for category, count in kept.items():
        if count > 0:
            going.update([line for line, cat in ranked if cat == category][:count])
    for line, _category in ranked:
        if len(going) >= places:
            break
        going.add(line)
    return [line for line, _category in ranked if line in going]
