"""Public pages: reachable for public tournaments, 404 for private ones, cached, live."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.pages.factories import add_verified_record, build_tournament, play_stage
from tournaments.models import Match, Round, Stage
from tournaments.services import schedule

pytestmark = pytest.mark.django_db


def _with_bracket(n_lines, slug, **kwargs):
    """A tournament whose group stage is closed and whose bracket has results."""
    tournament = build_tournament(n_lines, slug=slug, **kwargs)
    schedule.close_stage(tournament.stages.get(order=1), per_group=2)
    play_stage(tournament.stages.get(order=2), limit=1)
    return tournament


def public_urls(tournament):
    rr = tournament.stages.get(order=1)
    ko = tournament.stages.get(order=2)
    group = rr.groups.first()
    round_ = Round.objects.filter(stage=rr).first()
    match = Match.objects.filter(round__stage=rr, status=Match.Status.DONE).first()
    line = group.members.first().line
    player = line.members.first().player
    slug = tournament.slug
    return {
        "tournament": reverse("public:tournament", args=[slug]),
        "stage": reverse("public:stage", args=[slug, rr.pk]),
        "bracket": reverse("public:stage", args=[slug, ko.pk]),
        "group": reverse("public:group", args=[slug, group.pk]),
        "round": reverse("public:round", args=[slug, round_.pk]),
        "match": reverse("public:match", args=[slug, match.pk]),
        "line": reverse("public:line", args=[line.pk]),
        "player": reverse("public:player", args=[player.pk]),
    }


def test_every_public_page_renders(client):
    tournament = _with_bracket(8, "aperto", groups=2)
    assert client.get(reverse("public:home")).status_code == 200
    for name, url in public_urls(tournament).items():
        response = client.get(url)
        assert response.status_code == 200, name
        assert b'<main id="content"' in response.content, name


def test_private_tournament_pages_are_404(client):
    tournament = _with_bracket(4, "riservato", public=False)
    urls = public_urls(tournament)
    for name in ("tournament", "stage", "bracket", "group", "round", "match"):
        assert client.get(urls[name]).status_code == 404, name
    listing = client.get(reverse("public:home")).content.decode()
    assert "riservato" not in listing
    # a line of a private tournament shows no private results
    line_page = client.get(urls["line"]).content.decode()
    assert "Torneo riservato" not in line_page


def test_standings_show_tiebreak_columns_and_grid(client):
    tournament = build_tournament(4, slug="classifica")
    group = tournament.stages.get(order=1).groups.get()
    html = client.get(reverse("public:group", args=[tournament.slug, group.pk])).content.decode()
    assert 'class="standings"' in html and 'class="h2h"' in html
    assert '<th scope="col"' in html and '<th scope="row"' in html
    assert "VP" in html and "MP" in html
    assert html.count("Linea classifica") >= 8  # four lines, in the table and in the grid


def test_bracket_is_server_side_svg(client):
    tournament = _with_bracket(8, "tabellone", groups=2)
    ko = tournament.stages.get(order=2)
    html = client.get(reverse("public:stage", args=[tournament.slug, ko.pk])).content.decode()
    assert '<svg class="bracket"' in html
    assert 'role="group"' in html and "<title" in html
    assert "bm-won" in html  # the first semi-final has a winner
    assert "<script" not in html.split("<svg")[1].split("</svg>")[0]


def test_round_page_marks_timeouts(client):
    from tournaments.services import results

    tournament = build_tournament(4, slug="tempo", play=False)
    match = Match.objects.filter(round__stage__tournament=tournament).exclude(away=None).first()
    # the home line timed out in the first deal: the away line gets the deal's points
    deals = [
        {
            "points": [0, 6],
            "breakdown": [
                {},
                {"scope": 2, "carte": 1, "denari": 1, "settebello": 1, "primiera": 1},
            ],
            "penalty": True,
        }
    ]
    results.enter_result(match, deals, outcome="timeout", offender=match.home)
    html = client.get(
        reverse("public:round", args=[tournament.slug, match.round_id])
    ).content.decode()
    assert "badge-timeout" in html


def test_match_page_replay_viewer(client):
    tournament = build_tournament(4, slug="replay", play=False)
    match = Match.objects.filter(round__stage__tournament=tournament).exclude(away=None).first()
    add_verified_record(match, seed=3)
    html = client.get(reverse("public:match", args=[tournament.slug, match.pk])).content.decode()
    assert 'id="replay-timeline"' in html and 'id="replay-faces"' in html
    assert 'id="replay"' in html and "replay.js" in html
    assert "Settebello" in html or "settebello" in html


def test_match_page_without_record_says_so(client):
    tournament = build_tournament(4, slug="amano")
    match = Match.objects.filter(round__stage__tournament=tournament, status="done").first()
    html = client.get(reverse("public:match", args=[tournament.slug, match.pk])).content.decode()
    assert 'id="replay-timeline"' not in html
    assert 'class="deals"' in html


def test_italian_by_default_english_on_the_switch(client):
    tournament = build_tournament(4, slug="lingua")
    url = reverse("public:tournament", args=[tournament.slug])
    italian = client.get(url)
    assert italian.content.decode().count('lang="it"') == 1
    client.post(reverse("set_language"), {"language": "en", "next": url})
    english = client.get(url)
    assert 'lang="en"' in english.content.decode()


def test_etag_and_htmx_fragment(client):
    tournament = build_tournament(4, slug="cache")
    url = reverse("public:tournament", args=[tournament.slug])
    first = client.get(url)
    assert first["ETag"] and "max-age" in first["Cache-Control"]
    again = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    fragment = client.get(url, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    assert b"<html" not in fragment.content and b"<h1>" in fragment.content
    # the fragment a live page polls is asked again each time, never reused for max-age
    assert "no-cache" in fragment["Cache-Control"] and "max-age" not in fragment["Cache-Control"]
    again = client.get(url, HTTP_HX_REQUEST="true", HTTP_IF_NONE_MATCH=fragment["ETag"])
    assert again.status_code == 304
    assert b'hx-trigger="every 15s"' in first.content  # a running tournament polls


def test_cached_page_costs_one_query_and_follows_new_results(client):
    tournament = build_tournament(4, slug="vivo", play=False)
    group = tournament.stages.get(order=1).groups.get()
    url = reverse("public:group", args=[tournament.slug, group.pk])
    assert ">0</td>" in client.get(url).content.decode()
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    assert len(queries) == 1  # the tournament row with its change stamp
    play_stage(tournament.stages.get(order=1), limit=2)
    html = client.get(url).content.decode()
    assert html.count('<td class="num">1</td>') >= 2  # played counts moved


PAGES = ["tournament", "stage", "bracket", "group", "round", "match", "line", "player"]


def test_query_count_does_not_grow_with_lines(client):
    """Every public page asks as many queries for 16 lines as for 4, and at most 12 (the two
    tournaments are built once for all the pages: building them is most of the test's time)."""
    from django.core.cache import cache

    small = public_urls(_with_bracket(4, "piccolo"))
    big = public_urls(_with_bracket(16, "grande"))
    counts = {}
    for page in PAGES:
        for size, urls in (("4 lines", small), ("16 lines", big)):
            cache.clear()
            with CaptureQueriesContext(connection) as queries:
                assert client.get(urls[page]).status_code == 200, (page, size)
            counts.setdefault(page, []).append(len(queries))
    grown = {page: n for page, n in counts.items() if n[0] != n[1]}
    assert not grown, f"queries for 4 and 16 lines: {grown}"
    too_many = {page: n[1] for page, n in counts.items() if n[1] > 12}
    assert not too_many, f"more than 12 queries: {too_many}"


def test_stage_without_groups_and_unknown_ids(client):
    tournament = build_tournament(4, slug="vuoto", play=False)
    slug = tournament.slug
    assert client.get(reverse("public:group", args=[slug, 999999])).status_code == 404
    assert client.get(reverse("public:match", args=[slug, 999999])).status_code == 404
    assert client.get(reverse("public:round", args=[slug, 999999])).status_code == 404
    assert client.get(reverse("public:stage", args=[slug, 999999])).status_code == 404
    assert client.get(reverse("public:line", args=[999999])).status_code == 404
    assert client.get(reverse("public:player", args=[999999])).status_code == 404
    ko = tournament.stages.get(kind=Stage.Kind.KNOCKOUT)
    bracket = client.get(reverse("public:stage", args=[slug, ko.pk]))
    assert bracket.status_code == 200 and b"<svg" not in bracket.content
    assert client.post(reverse("public:tournament", args=[slug])).status_code == 405


def test_tournament_home_title_names_the_tournament_once(client):
    tournament = build_tournament(4, slug="titolo")
    html = client.get(reverse("public:tournament", args=[tournament.slug])).content.decode()
    assert "<title>Torneo titolo</title>" in html
    stage = tournament.stages.get(order=1)
    html = client.get(reverse("public:stage", args=[tournament.slug, stage.pk])).content.decode()
    assert "· Torneo titolo</title>" in html


def test_a_forfeit_or_a_bye_is_not_shown_as_waiting_for_deals(client):
    from tournaments.services import results

    tournament = build_tournament(3, slug="tavolino", play=False, knockout=False)
    matches = Match.objects.filter(round__stage__tournament=tournament)
    played = matches.exclude(outcome="bye").first()
    results.enter_result(played, [], outcome="forfeit", offender=played.away)
    bye = matches.filter(outcome="bye").first()
    waiting = "Ancora nessuna smazzata registrata."
    html = client.get(reverse("public:match", args=[tournament.slug, played.pk])).content.decode()
    assert "perso a tavolino" in html and waiting not in html
    html = client.get(reverse("public:match", args=[tournament.slug, bye.pk])).content.decode()
    assert "il turno di riposo non si gioca" in html and waiting not in html


def test_the_admin_forms_other_points_are_labelled_in_italian(client):
    """The admin form no longer has an "other" column (the referee refuses a category the
    variant does not score), but results stored with it are still shown, labelled."""
    from tournaments.services import results

    tournament = build_tournament(2, slug="altro", play=False, knockout=False)
    match = Match.objects.filter(round__stage__tournament=tournament).first()
    win = {"scope": 8, "carte": 1, "denari": 1, "settebello": 1, "primiera": 1}
    results.enter_result(match, [{"points": [12, 0], "breakdown": [win, {}]}])
    stored = results.in_force(match)
    stored.sheet["deals"][0]["breakdown"][0] = {**win, "scope": 6, "other": 2}
    stored.save()
    html = client.get(reverse("public:match", args=[tournament.slug, match.pk])).content.decode()
    assert "Altro" in html
    assert ">Other<" not in html
