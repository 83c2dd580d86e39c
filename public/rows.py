"""A page's match rows, rendered one by one and cached one by one.

A round page of 500 tables is 500 rows; after one result only one of them differs. Each row is
cached under a key made of everything the row shows (its match, results, lines' names and
withdrawals, language), so a changed match gets a new key and the 499 others are a single
``get_many`` away: rebuilding the page costs one row's rendering, and no signal has to know
which rows to forget. The same rows are what a pushed result carries (``live.patches``).
"""

import hashlib
import logging

from django.core.cache import cache
from django.template.loader import get_template
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

from live import patches
from tournaments import selectors as sel
from tournaments.models import Stage, Tournament
from tournaments.templatetags.entries import withdrawn_ids

logger = logging.getLogger(__name__)

ROW_SCHEMA = 1  # bump when _match_row.html changes, so a shared cache drops old rows
# No row is shorter than this (its cells' markup alone; a test holds it): a push of more results
# than its budget holds at this size carries no rows, which is known before reading them.
ROW_MIN_BYTES = 256
ROW_TTL = 3600  # seconds; a row's key changes with its content, so this only bounds memory


def _result_key(result):
    if result is None:
        return None
    return (result.points, result.mp, result.vp)


def row_key(tournament, match, show_group):
    """A key that changes whenever anything ``_match_row.html`` shows for ``match`` changes."""
    withdrawn = withdrawn_ids(tournament)
    parts = (
        ROW_SCHEMA,
        get_language(),
        tournament.slug,
        bool(show_group),
        match.pk,
        match.table_number,
        match.status,
        match.outcome,
        match.is_bye,
        match.has_tiebreak,
        match.winner_id,
        match.home_id,
        match.away_id,
        match.home.name if match.home_id else None,
        match.away.name if match.away_id else None,
        match.home_id in withdrawn,
        match.away_id in withdrawn,
        match.group_id,
        match.group.name if match.group_id else None,
        match.offender.name if match.offender_id else None,
        _result_key(match.home_result),
        _result_key(match.away_result),
    )
    return "pages:row:" + hashlib.sha1(repr(parts).encode()).hexdigest()


def match_rows(tournament, matches, show_group=False):
    """The ``<tr>`` of each match, in order: cached rows from one ``get_many``, the missing
    ones rendered (and cached)."""
    keys = [row_key(tournament, match, show_group) for match in matches]
    found = cache.get_many(keys) if keys else {}
    template = None
    rows, missing = [], {}
    for key, match in zip(keys, matches, strict=True):
        html = found.get(key)
        if html is None:
            if template is None:
                template = get_template("public/_match_row.html")
            html = template.render(
                {"tournament": tournament, "match": match, "show_group": show_group}
            )
            missing[key] = html
        rows.append(mark_safe(html))  # rendered by our template, escaped there
    if missing:
        cache.set_many(missing, ROW_TTL)
    return rows


def shows_group(stage):
    """The round page shows the group column for a round-robin stage's rounds."""
    return stage.kind == Stage.Kind.ROUND_ROBIN


def rows_in_languages(match_ids, languages) -> dict[str, list[dict[str, str]] | None] | None:
    """The round page's rows of these matches in each of ``languages``, the matches read once:
    what a pushed result carries (registered with ``live.patches`` in ``PublicConfig.ready``).
    None when one is a table of a duplicate stage still running: its result may be secret
    (shown as not played) and may open boards, which changes the rows of other tables; the
    pages fetch themselves, and a fetched page shows what the public may read
    (``access.withheld_results``). A language's None when its rows would not fit a push
    (``live.patches.ROW_BYTES_BUDGET``)."""
    if len(set(match_ids)) * ROW_MIN_BYTES > patches.ROW_BYTES_BUDGET:
        return None  # too many to fit a push, whatever they show: not even read
    matches = sel.matches_shown(match_ids)
    if any(
        m.round.stage.kind == Stage.Kind.DUPLICATE and m.round.stage.status != Stage.Status.CLOSED
        for m in matches
    ):
        return None
    # one object a tournament, so that its withdrawn lines are read once, not once a row
    tournaments: dict[int, Tournament] = {}
    found: dict[str, list[dict[str, str]] | None] = {}
    for language in languages:
        with translation.override(language):
            found[language] = _rows_within_budget(matches, tournaments)
    return found


def _rows_within_budget(matches, tournaments) -> list[dict[str, str]] | None:
    rows = []
    size, smallest = 0, None
    for done, match in enumerate(matches, start=1):
        tournament = tournaments.setdefault(
            match.round.stage.tournament_id, match.round.stage.tournament
        )
        (html,) = match_rows(tournament, [match], shows_group(match.round.stage))
        rows.append({"id": f"m-{match.pk}", "html": str(html)})
        length = len(rows[-1]["html"].encode())
        size += length
        smallest = length if smallest is None else min(smallest, length)
        if size + smallest * (len(matches) - done) > patches.ROW_BYTES_BUDGET:
            # A push carries no rows past its budget (``live.patches``: the pages fetch
            # themselves). The rows of one page differ only by names and figures: once those
            # rendered, and as many again as are left at the smallest of them, pass it, the
            # rest of a batch's results would be rendered for nothing.
            return None
    return rows
