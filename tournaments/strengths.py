"""Where line strengths come from: the RATING tie-break ranks level lines by them.

Strengths are a rating system's knowledge, and rating systems live in apps above this one. An
app that knows them (``ratings``) registers its source when it starts (``AppConfig.ready``);
without one, every line is unrated and the RATING tie-break leaves lines level.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping

logger = logging.getLogger(__name__)

StrengthSource = Callable[[Iterable[int], int], Mapping[int, float]]
"""``source(line_ids, seats_per_line)`` → ``{line_id: strength}`` (unrated lines left out)."""

_source: StrengthSource | None = None


def register_strength_source(source: StrengthSource) -> None:
    """Make ``source`` the one answer for line strengths (the last registration wins)."""
    global _source
    _source = source


def line_strengths(line_ids: Iterable[int], seats_per_line: int) -> dict[int, float]:
    """The strength of each rated line among ``line_ids``; empty without a registered source."""
    if _source is None:
        return {}
    return dict(_source(line_ids, seats_per_line))
