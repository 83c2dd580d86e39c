"""Page caching for the public pages: fragments keyed by a per-tournament version.

A public page costs one query when its fragment is cached: the tournament row, annotated with a
stamp of its latest change (newest ChangeLog id and newest Match.updated_at). Every result the
services store writes a ChangeLog row and saves the match, so the stamp moves with every change,
in whatever process made it. ``results_changed`` also bumps a version in the cache, so
a change made through the services is seen at once even where the stamp would not move.
With several server processes, point ``CACHE_URL`` at a shared cache (Redis).
"""

import hashlib
import logging

from django.core.cache import cache
from django.dispatch import receiver
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.translation import get_language

from tournaments.signals import results_changed

logger = logging.getLogger(__name__)

FRAGMENT_SCHEMA = 4  # bump when fragment templates change, so a shared cache drops old HTML
FRAGMENT_TTL = 600  # seconds; versions make stale entries unreachable long before this
BROWSER_MAX_AGE = 10  # seconds a browser or proxy may reuse a page without asking


def _version_key(tournament_id):
    return f"pages:version:{tournament_id}"


def tournament_version(tournament_id):
    """The cache-side version of a tournament's pages (bumped by ``results_changed``).

    Starts at 0 so that processes with separate caches agree on ETags until a bump.
    """
    return cache.get(_version_key(tournament_id), 0)


def bump_tournament_version(tournament_id):
    key = _version_key(tournament_id)
    try:
        cache.incr(key)
    except ValueError:  # not in the cache yet
        cache.set(key, 1, None)


@receiver(results_changed, dispatch_uid="public.caching.bump")
def _on_results_changed(sender, matches, **kwargs):
    """Results were stored or replaced: every page of their tournaments is out of date."""
    for tournament_id in {match.round.stage.tournament_id for match in matches}:
        bump_tournament_version(tournament_id)


def page_stamp(tournament):
    """A short string that changes whenever anything shown on the tournament's pages changes."""
    parts = (
        FRAGMENT_SCHEMA,
        tournament.pk,
        tournament_version(tournament.pk),
        getattr(tournament, "last_change_id", None),
        getattr(tournament, "last_match_update", None),
        tournament.updated_at,
        get_language(),
    )
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:20]


def cached_fragment(tournament, name, build, *args):
    """Return the rendered fragment ``name`` (args identify it), calling ``build()`` on a miss."""
    key = "pages:frag:{}:{}:{}".format(page_stamp(tournament), name, ":".join(str(a) for a in args))
    html = cache.get(key)
    if html is None:
        html = build()
        cache.set(key, html, FRAGMENT_TTL)
    return html


def etag_for(tournament, request):
    partial = "f" if request.headers.get("HX-Request") else "p"
    raw = f"{page_stamp(tournament)}|{request.get_full_path()}|{partial}"
    return '"' + hashlib.sha1(raw.encode()).hexdigest()[:24] + '"'


def not_modified(request, etag):
    """True when the browser already holds this exact page."""
    header = request.headers.get("If-None-Match", "")
    return etag in [tag.strip() for tag in header.split(",")] if header else False


def mark_cacheable(response, etag):
    response["ETag"] = etag
    # private: the page carries the language form's CSRF token, so only the browser keeps it
    patch_cache_control(response, private=True, max_age=BROWSER_MAX_AGE)
    patch_vary_headers(response, ["Accept-Language", "Cookie", "HX-Request"])
    return response
