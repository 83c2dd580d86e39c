"""The public pages at venue scale (issue 32): a cached page costs a cache lookup, a round
page's rows are cached one by one, and one request at a time builds a fragment."""

import gzip
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation

from live import patches
from public import caching, rows
from tests.pages.factories import build_tournament
from tests.tournaments.helpers import deals
from tournaments.models import Match, Round
from tournaments.services import results

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _stamps_kept(settings):
    """One process here: its stamps may be kept as with a shared cache (the default with
    locmem is to ask the database each time, see caching.stamp_seconds)."""
    settings.PAGES_STAMP_SECONDS = caching.STAMP_RECHECK_S


TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _round_url(tournament):
    round_ = Round.objects.filter(stage__tournament=tournament, stage__order=1).first()
    return round_, reverse("public:round", args=[tournament.slug, round_.pk])


def _playable(round_):
    return Match.objects.filter(round=round_, away__isnull=False, home__isnull=False).first()


def test_an_anonymous_page_comes_from_the_cache_without_a_query(
    client, django_capture_on_commit_callbacks
):
    tournament = build_tournament(4, slug="sala", play=False, knockout=False)
    round_, url = _round_url(tournament)
    first = client.get(url)
    with CaptureQueriesContext(connection) as queries:
        second = client.get(url)
        revalidated = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert len(queries) == 0  # was one: the tournament row with its stamp, for every request
    assert second["ETag"] == first["ETag"] and revalidated.status_code == 304
    assert second["X-Live-Version"] == first["X-Live-Version"] == "0"
    # the same page, but for the language form's token (each visitor gets their own)
    assert TOKEN.sub("", second.content.decode()) == TOKEN.sub("", first.content.decode())

    match = _playable(round_)
    with django_capture_on_commit_callbacks(execute=True):
        results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    after = client.get(url)
    assert after["ETag"] != first["ETag"] and after["X-Live-Version"] == "1"
    row = re.search(rf'<tr id="m-{match.pk}".*?</tr>', after.content.decode(), re.S).group(0)
    assert "12 – 7" in row and 'class="done"' in row


def test_with_locmem_the_stamp_comes_from_the_database_and_the_rest_from_the_cache(
    client, settings
):
    """Several workers with locmem each keep their own cache: a worker that did not make a
    change would serve its stamp for seconds. There the stamp is read each time (one query)."""
    settings.PAGES_STAMP_SECONDS = None
    tournament = build_tournament(4, slug="locale", play=False, knockout=False)
    round_, url = _round_url(tournament)
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        again = client.get(url)
    assert len(queries) == 1 and again.status_code == 200
    results.enter_result(_playable(round_), deals((5, 2), (3, 4), (4, 1)))  # no commit hook
    assert "12 – 7" in client.get(url).content.decode()


def test_a_page_from_the_cache_carries_a_token_that_works_for_its_visitor():
    """The cached body held the first visitor's CSRF token: the language form of every other
    visitor would have been refused (403)."""
    tournament = build_tournament(4, slug="lingue", play=False, knockout=False)
    _round, url = _round_url(tournament)
    Client().get(url)  # the first visitor fills the cache
    visitor = Client(enforce_csrf_checks=True)
    page = visitor.get(url)
    assert caching.CSRF_PLACEHOLDER not in page.content.decode()
    token = TOKEN.search(page.content.decode()).group(1)
    switched = visitor.post(
        reverse("set_language"), {"language": "en", "next": url, "csrfmiddlewaretoken": token}
    )
    assert switched.status_code == 302
    assert 'lang="en"' in visitor.get(url).content.decode()


def test_a_gzip_answer_is_compressed_once_and_carries_its_visitors_token(monkeypatch):
    """A browser asks for gzip: the cached page comes compressed (160 KB → a tenth), in one
    cache round trip, and its language form's token still works for that visitor."""
    tournament = build_tournament(4, slug="compresso", play=False, knockout=False)
    _round, url = _round_url(tournament)
    Client().get(url)  # the first visitor fills the cache
    lookups, real_get, real_many = [], cache.get, cache.get_many

    def get_many(keys, **kwargs):
        lookups.append(len(keys))
        monkeypatch.setattr(cache, "get", real_get)  # locmem's get_many gets one by one
        try:
            return real_many(keys, **kwargs)
        finally:
            monkeypatch.setattr(
                cache, "get", lambda *a, **k: lookups.append(1) or real_get(*a, **k)
            )

    monkeypatch.setattr(cache, "get_many", get_many)
    monkeypatch.setattr(cache, "get", lambda *a, **k: lookups.append(1) or real_get(*a, **k))
    visitor = Client(enforce_csrf_checks=True)
    page = visitor.get(url, HTTP_ACCEPT_ENCODING="br, gzip, deflate")
    assert lookups == [2]  # the stamp and the answer, in one round trip
    assert page["Content-Encoding"] == "gzip" and "Accept-Encoding" in page["Vary"]
    html = gzip.decompress(page.content).decode()
    plain = Client().get(url).content.decode()
    assert "Content-Encoding" not in Client().get(url) and TOKEN.sub("", html) == TOKEN.sub(
        "", plain
    )
    token = TOKEN.search(html).group(1)
    switched = visitor.post(
        reverse("set_language"), {"language": "en", "next": url, "csrfmiddlewaretoken": token}
    )
    assert switched.status_code == 302


def test_a_private_tournament_is_never_served_from_the_cache(client):
    from tests.api import factories
    from tournaments.models import Role, TournamentRole

    organizer = factories.user()
    tournament = build_tournament(4, slug="chiuso", public=False, play=False, knockout=False)
    TournamentRole.objects.create(tournament=tournament, user=organizer, role=Role.ORGANIZER)
    _round, url = _round_url(tournament)
    insider = Client()
    insider.force_login(organizer)
    assert insider.get(url).status_code == 200
    assert client.get(url).status_code == 404  # anonymous: the policy's answer, not the cache's


def test_after_one_result_the_round_page_renders_one_row(client, monkeypatch):
    tournament = build_tournament(6, slug="righe", play=False, knockout=False)
    round_, url = _round_url(tournament)
    client.get(url)
    rendered = []
    real = rows.get_template

    def counting(name):
        template = real(name)
        render = template.render
        template.render = lambda context: rendered.append(context["match"].pk) or render(context)
        return template

    monkeypatch.setattr(rows, "get_template", counting)
    match = _playable(round_)
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    cache.delete(f"pages:stamp:{tournament.slug}")  # what the commit does
    assert client.get(url).status_code == 200
    assert rendered == [match.pk]  # the other rows came from the cache


def test_one_builder_at_a_time_the_others_get_the_previous_version():
    with translation.override("it"):
        old = caching.Stamp(tournament_id=7, public=True, version=3, parts="a")
        new = caching.Stamp(tournament_id=7, public=True, version=4, parts="b")
        first = caching.cached_fragment(old, "round", lambda: "round at 3", 11)
        assert (first.value, first.version, first.fresh) == ("round at 3", 3, True)
        cache.add("pages:building:7:round:11:it", 1)  # another request is building version 4

        def never():
            raise AssertionError("a second builder")

        served = caching.cached_fragment(new, "round", never, 11)
        assert (served.value, served.version, served.fresh) == ("round at 3", 3, False)
        cache.delete("pages:building:7:round:11:it")
        built = caching.cached_fragment(new, "round", lambda: "round at 4", 11)
        assert (built.value, built.version, built.fresh) == ("round at 4", 4, True)


def test_a_stale_answer_is_not_kept_nor_cacheable(client):
    tournament = build_tournament(4, slug="vecchio", play=False, knockout=False)
    from live.versions import bump_version

    round_, url = _round_url(tournament)
    client.get(url)
    bump_version(tournament.pk)  # a result: the page's stamp moves
    cache.delete(f"pages:stamp:{tournament.slug}")
    cache.add(f"pages:building:{tournament.pk}:round:{round_.pk}:it", 1)  # someone builds it
    stale = client.get(url)
    assert stale.status_code == 200 and stale["X-Live-Version"] == "0"
    assert "no-cache" in stale["Cache-Control"] and not stale.has_header("ETag")


def test_a_pushed_result_carries_its_row_per_language_within_the_budget(monkeypatch):
    tournament = build_tournament(4, slug="spinta", play=False, knockout=False)
    round_, _url = _round_url(tournament)
    match = _playable(round_)
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    by_language = patches.rows_by_language([match.pk], ["it", "en"])
    (italian,), (english,) = by_language["it"], by_language["en"]
    assert italian["id"] == english["id"] == f"m-{match.pk}"
    assert 'title="Match details"' in english["html"]
    assert 'title="Match details"' not in italian["html"]
    monkeypatch.setattr(patches, "ROW_BYTES_BUDGET", 100)
    # too big: the pages fetch themselves
    assert patches.rows_by_language([match.pk], ["it"]) == {"it": None}


def test_only_a_round_of_rows_that_no_other_result_changes_is_patched_in_place(client):
    """A knock-out result also fills a later round's match: such a round page must fetch
    itself on a push, not wait for rows that will never come."""
    from tournaments.models import Stage

    tournament = build_tournament(4, slug="tabellone", play=False)
    _round, url = _round_url(tournament)
    assert "data-live-patch" in client.get(url).content.decode()
    knockout = Round.objects.create(stage=tournament.stages.get(kind=Stage.Kind.KNOCKOUT), number=1)
    page = client.get(reverse("public:round", args=[tournament.slug, knockout.pk]))
    assert page.status_code == 200 and "data-live-patch" not in page.content.decode()


def test_a_push_of_more_results_than_its_budget_holds_reads_and_renders_nothing(monkeypatch):
    """A batch's results (50 at once) never fit a push: the rows are not read nor rendered,
    twice over (once a language), for the message to carry none of them."""
    tournament = build_tournament(4, slug="troppi", play=True, knockout=False)
    ids = list(
        Match.objects.filter(round__stage__tournament=tournament).values_list("pk", flat=True)
    )
    monkeypatch.setattr(patches, "ROW_BYTES_BUDGET", rows.ROW_MIN_BYTES * (len(ids) - 1))
    with CaptureQueriesContext(connection) as queries:
        assert patches.rows_by_language(ids, ["it"]) == {"it": None}
    assert len(queries) == 0


def test_no_row_is_shorter_than_the_least_a_push_counts_on():
    tournament = build_tournament(4, slug="corte", play=False, knockout=False)
    ids = Match.objects.filter(round__stage__tournament=tournament).values_list("pk", flat=True)
    for language in ("it", "en"):
        pushed = rows.rows_in_languages(list(ids)[:1], [language])[language]
        assert pushed and len(pushed[0]["html"].encode()) >= rows.ROW_MIN_BYTES


def test_a_push_reads_a_tournament_s_withdrawn_lines_once_for_all_its_rows():
    tournament = build_tournament(4, slug="ritiri", play=True, knockout=False)
    ids = list(
        Match.objects.filter(round__stage__tournament=tournament).values_list("pk", flat=True)
    )
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        assert len(rows.rows_in_languages(ids[:3], ["it"])["it"]) == 3
    assert sum("withdrawn" in q["sql"] for q in queries.captured_queries) == 1
