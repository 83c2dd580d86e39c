"""The desk's pages for play at the table: who may see and change links, cards and the room."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from scoresheets.models import PrivateLink, TableReport
from scoresheets.services import links
from tests.tournaments.conftest import RR, make_tournament
from tournaments.models import ChangeLog, Match, Role, TournamentRole
from tournaments.services import schedule

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(running):
    organizer = User.objects.create_user("org")
    scorer = User.objects.create_user("scorer")
    running.organizers.add(organizer)
    TournamentRole.objects.create(tournament=running, user=scorer, role=Role.SCORER)
    return organizer, scorer


def _client(user, **kwargs):
    client = Client(**kwargs)
    client.force_login(user)
    return client


def _url(name, tournament, **kwargs):
    return reverse(name, kwargs={"slug": tournament.slug, **kwargs})


def test_links_page_shows_each_line_with_address_and_qr(running, people, first_match):
    organizer, scorer = people
    link = links.link_for(running, first_match.home)
    page = _client(scorer).get(_url("room:links", running))
    assert page.status_code == 200
    html = page.content.decode()
    assert f"http://testserver/p/{link.token}/" in html
    assert html.count('<svg viewBox="0 0 ') == 1 and 'class="qr"' in html
    assert 'style="' not in html.split("<svg", 1)[1].split("</svg>", 1)[0]  # CSP: no inline style
    # a scorer sees the links but gets no button to change them
    assert _url("room:reissue", running) not in html
    assert (
        _url("room:reissue", running)
        in _client(organizer).get(_url("room:links", running)).content.decode()
    )


def test_changing_links_needs_a_post_with_csrf_and_the_right_to_manage_entries(
    running, people, first_match
):
    organizer, scorer = people
    link = links.link_for(running, first_match.home)
    assert _client(organizer).get(_url("room:revoke", running)).status_code == 405
    response = _client(scorer).post(_url("room:revoke", running), {"link": link.pk})
    assert response.status_code == 403
    strict = _client(organizer, enforce_csrf_checks=True)
    assert strict.post(_url("room:revoke", running), {"link": link.pk}).status_code == 403
    link.refresh_from_db()
    assert link.is_live


def test_issue_reissue_and_revoke(running, people, first_match):
    organizer, _ = people
    client = _client(organizer)
    response = client.post(_url("room:issue", running))
    assert response.status_code == 302
    live = PrivateLink.objects.filter(tournament=running, match=None, revoked_at=None)
    assert live.count() == 4  # one per line
    old = live.get(line=first_match.home)
    client.post(_url("room:reissue", running), {"link": old.pk})
    old.refresh_from_db()
    new = live.get(line=first_match.home)
    assert not old.is_live and new.token != old.token
    client.post(_url("room:revoke", running), {"link": new.pk})
    assert not live.filter(line=first_match.home).exists()
    again = client.post(_url("room:revoke", running), {"link": new.pk}, follow=True)
    assert "msg-error" in again.content.decode()  # already revoked: said, nothing changes
    assert ChangeLog.objects.filter(tournament=running, action="link_revoked").count() == 2


def test_table_cards_get_a_qr_per_side_once_prepared(running, people, first_match):
    organizer, scorer = people
    round_id = first_match.round_id
    print_url = _url("desk:print", running, round_id=round_id)
    before = _client(scorer).get(print_url).content.decode()
    assert "no link issued" in before or "nessun link" in before
    assert not PrivateLink.objects.exists()  # printing never issues links by itself
    assert _url("room:prepare-cards", running, round_id=round_id) not in before
    prepare = _url("room:prepare-cards", running, round_id=round_id)
    assert _client(scorer).post(prepare).status_code == 403
    response = _client(organizer).post(prepare)
    assert response.status_code == 302 and response["Location"] == print_url
    matches = Match.objects.filter(round_id=round_id, home__isnull=False, away__isnull=False)
    assert PrivateLink.objects.filter(match__in=matches).count() == 2 * matches.count()
    _client(organizer).post(prepare)  # twice: nothing more
    assert PrivateLink.objects.filter(match__in=matches).count() == 2 * matches.count()
    after = _client(scorer).get(print_url).content.decode()
    assert after.count('class="qr"') == 2 * matches.count()
    home_link = PrivateLink.objects.get(match=first_match, line=first_match.home)
    assert home_link.token in after
    assert _url("room:reissue", running) not in after  # a scorer prints, does not re-issue
    # a lost table card: re-issued from the printing page, back to it
    response = _client(organizer).post(
        _url("room:reissue", running), {"link": home_link.pk, "next": "print"}
    )
    assert response["Location"] == print_url
    assert home_link.token not in _client(scorer).get(print_url).content.decode()


def test_line_cards_print_the_live_links(running, people, first_match):
    _, scorer = people
    link = links.link_for(running, first_match.home)
    page = _client(scorer).get(_url("room:line-cards", running)).content.decode()
    assert link.token in page and page.count('class="line-card"') == 1
    one = _client(scorer).get(_url("room:line-cards", running) + f"?line={first_match.away_id}")
    assert 'class="line-card"' not in one.content.decode()


def test_room_and_links_queries_do_not_grow_with_tables(django_assert_max_num_queries):
    tournament = make_tournament(n_lines=16, stages=[RR], name="Grande")
    stage = tournament.stages.get()
    schedule.create_groups(stage, 2)
    schedule.generate_round_robin(stage)
    organizer = User.objects.create_user("big")
    tournament.organizers.add(organizer)
    client = _client(organizer)
    client.get(_url("room:current", tournament))  # warm the session and caches
    with django_assert_max_num_queries(16):
        page = client.get(_url("room:current", tournament))
    assert page.content.decode().count("room-state-waiting") == 8 + 1  # 8 tables + the count
    client.post(_url("room:issue", tournament))
    for match in Match.objects.filter(round__stage=stage, round__number=1):
        links.link_for(tournament, match.home, match)
    with django_assert_max_num_queries(12):
        page = client.get(_url("room:links", tournament))
    assert page.content.decode().count('class="qr"') == 16


def test_room_lists_tables_disputed_first_and_starts_the_round(running, people, first_match):
    organizer, scorer = people
    others = Match.objects.filter(round=first_match.round).exclude(pk=first_match.pk)
    disputed = others.first()
    TableReport.objects.create(match=disputed, side="home", state=TableReport.State.DISPUTED)
    page = _client(scorer).get(_url("room:current", running)).content.decode()
    assert 'id="live"' in page and "js/live.js" in page
    rows = re.findall(r'<tr class="room-state-(\w+)">', page)
    assert rows[0] == "disputed"
    assert _url("room:start", running, round_id=first_match.round_id) not in page  # scorer
    # the fragment alone for the live refresh
    fragment = _client(scorer).get(_url("room:current", running), HTTP_HX_REQUEST="true")
    assert b"<html" not in fragment.content and b"room-state-disputed" in fragment.content
    start = _url("room:start", running, round_id=first_match.round_id)
    assert _client(scorer).post(start).status_code == 403
    assert _client(organizer).get(start).status_code == 405
    assert _client(organizer).post(start).status_code == 302
    first_match.round.refresh_from_db()
    started = first_match.round.starts_at
    assert started is not None
    _client(organizer).post(start)  # once only
    first_match.round.refresh_from_db()
    assert first_match.round.starts_at == started
    assert ChangeLog.objects.filter(tournament=running, action="round.started").count() == 1


def test_only_those_who_enter_results_see_links_cards_and_qr_codes(running, people, first_match):
    """A referee read every line's token on the links page, submitted a
    sheet as the home line and countersigned it as the away line."""
    organizer, scorer = people
    referee = User.objects.create_user("arbitro")
    TournamentRole.objects.create(tournament=running, user=referee, role=Role.REFEREE)
    home = links.link_for(running, first_match.home, first_match)
    away = links.link_for(running, first_match.away, first_match)
    line = links.link_for(running, first_match.home)
    print_url = reverse("desk:print", args=[running.slug, first_match.round_id])
    for name in ("room:links", "room:line-cards"):
        assert _client(referee).get(_url(name, running)).status_code == 403
        assert _client(scorer).get(_url(name, running)).status_code == 200
    for user, shown in ((referee, False), (scorer, True), (organizer, True)):
        html = _client(user).get(print_url).content.decode()
        desk = _client(user).get(_url("desk:tournament", running)).content.decode()
        for link in (home, away):  # the table cards' QR codes and addresses
            assert (link.token in html) is shown, user
        assert line.token not in html  # the line's own card is printed elsewhere
        assert (_url("room:links", running) in desk) is shown, user


def test_an_action_through_a_link_by_a_desk_user_is_recorded_as_theirs(
    running, people, first_match
):
    from tests.scoresheets.test_reports import SHEET

    _organizer, scorer = people
    home = links.link_for(running, first_match.home)
    away = links.link_for(running, first_match.away)
    client = _client(scorer)
    submit = reverse("table:submit", args=[home.token, first_match.pk])
    body = {"deals": SHEET, "client_key": "5f0c8a56-0d5e-4d0e-9a39-1b1f0f0d4e21", "based_on": ""}
    sent = client.post(submit, body, content_type="application/json")
    assert sent.status_code == 200, sent.content
    signed = client.post(
        reverse("table:sheet", args=[away.token, first_match.pk]), {"action": "accept"}
    )
    assert signed.status_code == 302
    logged = ChangeLog.objects.filter(match=first_match)
    for action in ("result.proposed", "table.submitted", "result.countersigned", "table.accepted"):
        entries = logged.filter(action=action)
        assert entries.exists() and all(e.user_id == scorer.pk for e in entries), action
