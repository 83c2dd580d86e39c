"""Where a match result can come from: the one registry of result sources.

Every version of a match's result names its source. Whether a source speaks for the organizer
decides precedence: a version from a source that does not (a verified record, a players' own
report) never silently replaces one that does; it waits for the organizer's decision.
The players' sheets at the table (scoresheets' table reports) add one entry here and nothing
else.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import models
from django.utils.functional import Promise
from django.utils.translation import pgettext_lazy

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResultSourceInfo:
    key: str
    label: Promise
    speaks_for_organizer: bool
    """True when an organizer (or the tournament's staff) entered it; a version from a source
    that does not only comes into force over one that does through an explicit decision."""


SOURCES: tuple[ResultSourceInfo, ...] = (
    ResultSourceInfo("desk", pgettext_lazy("result source", "Desk"), True),
    ResultSourceInfo("admin", pgettext_lazy("result source", "Admin"), True),
    ResultSourceInfo("api", pgettext_lazy("result source", "API"), True),
    ResultSourceInfo("import", pgettext_lazy("result source", "Import"), True),
    ResultSourceInfo("forfeit", pgettext_lazy("result source", "Forfeit or withdrawal"), True),
    ResultSourceInfo("bye", pgettext_lazy("result source", "Bye of the draw"), True),
    ResultSourceInfo("record", pgettext_lazy("result source", "Verified record"), False),
    ResultSourceInfo("players", pgettext_lazy("result source", "Players' own report"), False),
)
BY_KEY: dict[str, ResultSourceInfo] = {source.key: source for source in SOURCES}

# django-stubs types the class syntax of Choices only, not the functional API used here.
ResultSource = models.TextChoices(  # type: ignore[call-overload]
    "ResultSource",
    [(source.key.upper(), (source.key, source.label)) for source in SOURCES],
)
"""Model choices derived from :data:`SOURCES`."""


def speaks_for_organizer(key: str) -> bool:
    source = BY_KEY.get(str(key))
    return bool(source and source.speaks_for_organizer)
