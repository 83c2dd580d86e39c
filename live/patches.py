"""What a pushed result carries: the changed rows as HTML, rendered by the app that owns them.

The live app does not know the pages; an upper app (``public``) registers a renderer at start-up
that, given the matches whose result changed, returns the rows the public pages show for them
(``[{"id": "m-12", "html": "<tr id=\\"m-12\\" …>"}]``) in the active language. A page whose
content is only such rows (the round page) replaces them in place; any other page fetches itself.

The rows are public content only: they go to the public group, which desk sockets also hear.
A renderer answers None for matches whose rows must not be pushed (a running duplicate stage's
tables: a result there can open boards and so change other tables' rows, and a table still
secret shows as not played): the message then carries no rows and the pages fetch themselves.
"""

import logging
from collections.abc import Callable, Sequence

logger = logging.getLogger(__name__)

Row = dict[str, str]
# Given the matches and the languages, a renderer answers per language the rows (None for a
# language whose rows it declines), or None for all: it reads the matches once for every
# language (a result is pushed in each of the site's languages).
RowRenderer = Callable[[Sequence[int], Sequence[str]], dict[str, list[Row] | None] | None]

# Above this many bytes of rows per language a result's message carries no rows and its pages
# fetch themselves (a round replayed at once, say): the budget per result per client.
ROW_BYTES_BUDGET = 8 * 1024

_renderers: list[RowRenderer] = []


def register(renderer: RowRenderer) -> None:
    """Called by an upper app in its ``ready()``; registering the same function twice is a no-op."""
    if renderer not in _renderers:
        _renderers.append(renderer)


def rows_by_language(
    match_ids: Sequence[int], languages: Sequence[str]
) -> dict[str, list[Row] | None]:
    """The rows of these matches in each of ``languages``; a language's None when they exceed
    the byte budget, a renderer fails or declines (the pages then fetch themselves: never a
    wrong row)."""
    declined: dict[str, list[Row] | None] = dict.fromkeys(languages)
    rows: dict[str, list[Row] | None] = {language: [] for language in languages}
    try:
        for renderer in _renderers:
            rendered = renderer(match_ids, languages)
            if rendered is None:  # not pushed: the pages fetch themselves
                return declined
            for language in languages:
                found, kept = rendered.get(language), rows[language]
                rows[language] = None if found is None or kept is None else kept + found
    except Exception:
        logger.exception("live: could not render the rows of matches %s", list(match_ids))
        return declined
    return {
        language: None
        if found is None or sum(len(row["html"].encode()) for row in found) > ROW_BYTES_BUDGET
        else found
        for language, found in rows.items()
    }
