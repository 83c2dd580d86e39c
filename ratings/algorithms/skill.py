"""Skill levels (livelli di abilità): named bands of the displayed rating, defined as data.

The bands live in ``ratings/data/skill_levels.json`` (or the file named by the
``RATINGS_SKILL_LEVELS_FILE`` setting), so a federation can rename or move them without a release.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_LEVELS_PATH = Path(__file__).resolve().parent.parent / "data" / "skill_levels.json"


class SkillLevelsError(ValueError):
    """The skill-level file is malformed."""


@dataclass(frozen=True)
class SkillLevel:
    slug: str
    min_rating: int | None  # None: the bottom band, open below
    name_it: str
    name_en: str

    def name(self, language: str | None) -> str:
        return self.name_it if (language or "it").startswith("it") else self.name_en


def parse_levels(data: dict[str, Any]) -> tuple[SkillLevel, ...]:
    try:
        levels = tuple(
            SkillLevel(
                slug=str(item["slug"]),
                min_rating=None if item.get("min_rating") is None else int(item["min_rating"]),
                name_it=str(item["name_it"]),
                name_en=str(item["name_en"]),
            )
            for item in data["levels"]
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SkillLevelsError(f"malformed skill levels: {exc}") from exc
    if not levels or levels[0].min_rating is not None:
        raise SkillLevelsError("the first level must be open below (min_rating null)")
    bounds = [lv.min_rating for lv in levels[1:] if lv.min_rating is not None]
    if len(bounds) != len(levels) - 1 or bounds != sorted(set(bounds)):
        raise SkillLevelsError("min_rating must strictly increase after the first level")
    return levels


def load_levels(path: Path | str = DEFAULT_LEVELS_PATH) -> tuple[SkillLevel, ...]:
    with open(path, encoding="utf-8") as fh:
        return parse_levels(json.load(fh))


def level_for(rating: int, levels: Sequence[SkillLevel]) -> SkillLevel:
    """The highest band whose lower bound the rating reaches."""
    found = levels[0]
    for level in levels[1:]:
        if level.min_rating is not None and rating >= level.min_rating:
            found = level
        else:
            break
    return found
