"""The version of a tournament's live pages: a counter every result moves by one.

A page is rendered at a version (``data-live-version``, the ``X-Live-Version`` header) and each
pushed result carries the version it brings the page to, so a page that sees a gap (a message
lost while its socket was down, or two arriving out of order) knows it must fetch itself once
instead of applying rows it cannot place. The counter lives in the shared cache (Redis with
several processes) so every web process renders pages at the same version the push speaks of.
"""

import logging

from django.core.cache import cache

logger = logging.getLogger(__name__)


def _key(tournament_id: int) -> str:
    return f"live:version:{tournament_id}"


def current_version(tournament_id: int) -> int:
    """The version the tournament's pages are at (0 until the first result moves it)."""
    value = cache.get(_key(tournament_id), 0)
    return int(value)


def bump_version(tournament_id: int) -> int:
    """Move the version by one and return the new one (atomic in Redis and in locmem)."""
    key = _key(tournament_id)
    try:
        return int(cache.incr(key))
    except ValueError:  # not in the cache yet (first result, or the cache was flushed)
        if cache.add(key, 1, None):
            return 1
        return int(cache.incr(key))
