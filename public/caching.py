"""Page caching for the public pages: whole answers, fragments and a freshness stamp.

Three layers, each in the default cache (Redis, ``CACHE_URL``, with several processes):

- **The stamp** of a tournament (``pages:stamp:<slug>``): its id, whether it is public, and what
  its pages key on (the live version that every result moves, its newest ChangeLog id, newest
  ``Match.updated_at`` and ``updated_at``). Read from the database by a request that misses it,
  kept ``STAMP_RECHECK_S`` seconds, and forgotten after the commit of any result, stage, change
  log entry or tournament edit, so a change made through the services shows at once and one
  made around them (a bulk ``update()``) within those seconds.
- **The whole answer** (``pages:answer:<slug>:<encoding>:<page>``) of an anonymous request: the
  ETag it was built for, its version and body, plain and gzipped once (``spliced_gzip``). A
  request with no session cookie reads the stamp and the answer in one round trip
  (``answer_from_cache``: no query, no rendering), and serves it if its ETag is the stamp's; a
  revalidation with the current ETag gets a 304. The language form's CSRF token is the only
  per-visitor part of a page: it is kept out of the stored body and filled in for each request.
- **Fragments** (``pages:frag:<stamp>:…``), built by one request at a time (single flight): the
  others are served the previous version meanwhile, marked not cacheable, rather than all
  rebuilding the same page after each result.
"""

import dataclasses
import hashlib
import logging
import re
import time
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.db.models.signals import post_save
from django.http import HttpResponse, HttpResponseNotModified
from django.middleware.csrf import get_token
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.translation import get_language

from live.versions import current_version
from public import spliced_gzip
from tournaments.models import ChangeLog, Stage, Tournament
from tournaments.services.rows import one_row
from tournaments.signals import on_commit_once, results_changed

logger = logging.getLogger(__name__)

FRAGMENT_SCHEMA = 5  # bump when fragment templates change, so a shared cache drops old HTML
FRAGMENT_TTL = 600  # seconds; versions make stale entries unreachable long before this
ANSWER_TTL = 600  # seconds; an answer is keyed by its ETag, which moves with the stamp
STAMP_RECHECK_S = 3  # seconds a tournament's stamp is trusted without asking the database
BUILD_LOCK_S = 30  # seconds one builder holds a fragment at most (a crashed one lets go then)
BUILD_WAIT_S = 5.0  # seconds a request with no previous version waits for the builder
BROWSER_MAX_AGE = 10  # seconds a browser or proxy may reuse a page without asking
VERSION_HEADER = "X-Live-Version"

CSRF_PLACEHOLDER = "\x00csrf\x00"
_CSRF_VALUE = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]*(")')


@dataclasses.dataclass(frozen=True)
class Stamp:
    """What a tournament's pages key on, as kept in the cache between database reads."""

    tournament_id: int
    public: bool
    version: int
    parts: str  # the database side: newest change, newest match update, tournament's update

    def page(self, language: str) -> str:
        raw = repr((FRAGMENT_SCHEMA, self.tournament_id, self.version, self.parts, language))
        return hashlib.sha1(raw.encode()).hexdigest()[:20]


def _stamp_key(slug):
    return f"pages:stamp:{slug}"


def stamp_of(tournament):
    """The stamp of a tournament just read with ``selectors.public_tournament`` (annotated), kept
    for the next requests."""
    stamp = Stamp(
        tournament_id=tournament.pk,
        public=bool(tournament.is_public),
        version=current_version(tournament.pk),
        parts=repr(
            (
                getattr(tournament, "last_change_id", None),
                getattr(tournament, "last_match_update", None),
                tournament.updated_at,
            )
        ),
    )
    seconds = stamp_seconds()
    if seconds:
        cache.set(_stamp_key(tournament.slug), stamp, seconds)
    return stamp


def stamp_seconds():
    """How long a stamp is trusted: ``PAGES_STAMP_SECONDS``, by default STAMP_RECHECK_S with a
    shared cache and 0 (ask the database each time) with locmem, which each process keeps
    apart: a worker that did not make the change would not forget its stamp."""
    configured = getattr(settings, "PAGES_STAMP_SECONDS", None)
    if configured is not None:
        return configured
    return 0 if settings.CACHES["default"]["BACKEND"].endswith("LocMemCache") else STAMP_RECHECK_S


def forget_stamp(tournament_id):
    """After a change committed: the next request reads the stamp from the database."""
    slug = one_row(Tournament.objects.filter(pk=tournament_id).values_list("slug", flat=True))
    if slug is not None:
        cache.delete(_stamp_key(slug))


def _forget_after_commit(tournament_id):
    on_commit_once(forget_stamp, tournament_id)  # once per commit, however many entries


def _on_results_changed(sender, matches, **kwargs):
    for tournament_id in {match.round.stage.tournament_id for match in matches}:
        _forget_after_commit(tournament_id)


def _on_tournament_saved(sender, instance, **kwargs):
    _forget_after_commit(instance.pk)


def _on_stage_saved(sender, instance, **kwargs):
    _forget_after_commit(instance.tournament_id)


def _on_change_logged(sender, instance, created, **kwargs):
    if created:
        _forget_after_commit(instance.tournament_id)


def connect():
    """Called by ``PublicConfig.ready``."""
    results_changed.connect(_on_results_changed, dispatch_uid="public.caching.results")
    post_save.connect(_on_tournament_saved, sender=Tournament, dispatch_uid="public.caching.t")
    post_save.connect(_on_stage_saved, sender=Stage, dispatch_uid="public.caching.stage")
    post_save.connect(_on_change_logged, sender=ChangeLog, dispatch_uid="public.caching.log")


def etag_for(stamp, request):
    partial_page = "f" if request.headers.get("HX-Request") else "p"
    raw = f"{stamp.page(get_language())}|{request.get_full_path()}|{partial_page}"
    return '"' + hashlib.sha1(raw.encode()).hexdigest()[:24] + '"'


def not_modified(request, etag):
    """True when the browser already holds this exact page."""
    header = request.headers.get("If-None-Match", "")
    return etag in [tag.strip() for tag in header.split(",")] if header else False


def mark_cacheable(request, response, etag, version):
    response["ETag"] = etag
    response[VERSION_HEADER] = str(version)
    # private: the page carries the language form's CSRF token, so only the browser keeps it
    if request.headers.get("HX-Request"):
        # a fragment is what a live page polls while its socket is down: asked again each time
        # (a 304 when unchanged), or a result would wait out the browser's copy
        patch_cache_control(response, private=True, no_cache=True)
    else:
        patch_cache_control(response, private=True, max_age=BROWSER_MAX_AGE)
    patch_vary_headers(response, ["Accept-Encoding", "Accept-Language", "Cookie", "HX-Request"])
    return response


def mark_not_cacheable(response, version):
    """A previous version served while another request builds the new one."""
    response[VERSION_HEADER] = str(version)
    patch_cache_control(response, no_cache=True, private=True)
    patch_vary_headers(response, ["Accept-Language", "Cookie", "HX-Request"])
    return response


# --- whole answers ----------------------------------------------------------------------------

_ACCEPTS_GZIP = re.compile(r"\bgzip\b")


def _answer_key(request, slug, encoding):
    """One key per page as a visitor asks for it (language, path, fragment or page, encoding),
    holding the ETag it was built for: read in the same round trip as the stamp."""
    partial_page = "f" if request.headers.get("HX-Request") else "p"
    raw = f"{get_language()}|{request.get_full_path()}|{partial_page}"
    return f"pages:answer:{slug}:{encoding}:{hashlib.sha1(raw.encode()).hexdigest()[:24]}"


def _encoding(request):
    return "gzip" if _ACCEPTS_GZIP.search(request.headers.get("Accept-Encoding", "")) else "plain"


def _anonymous(request):
    """A request that cannot see more than the public: no session, so no user and no role."""
    return settings.SESSION_COOKIE_NAME not in request.COOKIES


def keep_answer(request, slug, stamp, etag, response):
    """Keep a fresh 200 answer for the next anonymous requests of the same page, plain and
    gzipped once, with the language form's CSRF token left out (a hole filled per request)."""
    if not (_anonymous(request) and stamp.public and response.status_code == 200):
        return
    parts = [
        part.encode()
        for part in _CSRF_VALUE.sub(
            r"\g<1>" + CSRF_PLACEHOLDER + r"\g<2>", response.content.decode()
        ).split(CSRF_PLACEHOLDER)
    ]
    cache.set_many(
        {
            _answer_key(request, slug, "plain"): (etag, stamp.version, parts),
            _answer_key(request, slug, "gzip"): (etag, stamp.version, spliced_gzip.prepare(parts)),
        },
        ANSWER_TTL,
    )


def answer_from_cache(request, slug):
    """The page from the cache (a 304 when the browser holds it), or None to build it: the
    stamp and the answer in one round trip."""
    if request.method not in ("GET", "HEAD") or not _anonymous(request):
        return None
    encoding = _encoding(request)
    stamp_key, answer_key = _stamp_key(slug), _answer_key(request, slug, encoding)
    found = cache.get_many([stamp_key, answer_key])
    stamp = found.get(stamp_key)
    if stamp is None or not stamp.public:
        return None
    etag = etag_for(stamp, request)
    if not_modified(request, etag):
        return mark_cacheable(request, HttpResponseNotModified(), etag, stamp.version)
    return _answer(request, found.get(answer_key), etag, encoding)


def kept_answer(request, slug, stamp, etag):
    """The whole answer kept for this ETag, or None."""
    if not (_anonymous(request) and stamp.public):
        return None
    encoding = _encoding(request)
    return _answer(request, cache.get(_answer_key(request, slug, encoding)), etag, encoding)


def _answer(request, kept, etag, encoding):
    if kept is None or kept[0] != etag:  # none, or built for an older stamp
        return None
    _etag, version, body = kept
    if encoding == "gzip":
        holes = len(body.parts) - 1
        response = HttpResponse(spliced_gzip.fill(body, [get_token(request).encode()] * holes))
        response["Content-Encoding"] = "gzip"
    else:
        token = get_token(request).encode() if len(body) > 1 else b""
        response = HttpResponse(token.join(body))
    return mark_cacheable(request, response, etag, version)


def from_cache(view):
    """Serve a tournament page's answer from the cache when it can; else run the view."""

    @wraps(view)
    def wrapper(request, slug, *args, **kwargs):
        answer = answer_from_cache(request, slug)
        if answer is not None:
            return answer
        return view(request, slug, *args, **kwargs)

    return wrapper


# --- fragments --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Fragment:
    value: object
    version: int
    fresh: bool  # False: a previous version, served while another request builds this one


def cached_fragment(stamp, name, build, *args):
    """The fragment ``name`` (args identify it) at ``stamp``: from the cache, built by this
    request if no other is building it, else the previous version (or, with none, the one the
    builder makes, waited for a few seconds)."""
    language = get_language()
    ident = "{}:{}:{}:{}".format(
        stamp.tournament_id, name, ":".join(str(a) for a in args), language
    )
    key = f"pages:frag:{stamp.page(language)}:{ident}"
    value = cache.get(key)
    if value is not None:
        return Fragment(value, stamp.version, True)
    lock, latest = f"pages:building:{ident}", f"pages:latest:{ident}"
    if cache.add(lock, 1, BUILD_LOCK_S):
        try:
            return _build(stamp, key, latest, build)
        finally:
            cache.delete(lock)
    previous = cache.get(latest)
    if previous is not None:
        version, value = previous
        return Fragment(value, version, False)
    deadline = time.monotonic() + BUILD_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(0.05)
        value = cache.get(key)
        if value is not None:
            return Fragment(value, stamp.version, True)
    return _build(stamp, key, latest, build)


def _build(stamp, key, latest, build):
    value = build()
    cache.set_many({key: value, latest: (stamp.version, value)}, FRAGMENT_TTL)
    return Fragment(value, stamp.version, True)
