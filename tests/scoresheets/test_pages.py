"""The phone pages and the referee's page through the test client (the browser tests in
tests/browser/test_at_the_table.py drive the same pages in Chromium)."""

import json
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from scoresheets.models import TableReport
from scoresheets.services import links, reports
from tests.scoresheets.test_reports import OTHER, SHEET
from tournaments.models import ChangeLog, Match, Role, TournamentRole
from tournaments.services import results, schedule


@pytest.fixture
def cards(running, first_match):
    return links.link_for(running, first_match.home), links.link_for(running, first_match.away)


def _post_json(client, url, data):
    return client.post(url, json.dumps(data), content_type="application/json")


def test_unknown_revoked_and_foreign(client, running, first_match, cards):
    assert client.get(reverse("table:line", args=["nope" * 6])).status_code == 404
    foreign = (
        Match.objects.filter(round__stage__tournament=running)
        .exclude(home=first_match.home)
        .exclude(away=first_match.home)
        .first()
    )
    assert client.get(reverse("table:sheet", args=[cards[0].token, foreign.pk])).status_code == 404
    check = reverse("table:check", args=[cards[0].token, foreign.pk])
    assert _post_json(client, check, {"deals": []}).status_code == 404
    links.revoke(cards[0])
    refused = client.get(reverse("table:sheet", args=[cards[0].token, first_match.pk]))
    assert refused.status_code == 410
    assert "nuovo link" in refused.content.decode()  # the Italian page: ask the desk for one


def test_enter_check_submit_and_sign(client, first_match, cards):
    home, away = cards
    line = client.get(reverse("table:line", args=[home.token]))
    assert line.status_code == 200 and first_match.away.name in line.content.decode()
    page = client.get(reverse("table:sheet", args=[home.token, first_match.pk]))
    assert page.status_code == 200 and b'id="sheet"' in page.content
    check = reverse("table:check", args=[home.token, first_match.pk])
    partial = _post_json(client, check, {"deals": SHEET[:1]}).json()
    assert partial["ok"] and partial["totals"] == [5, 2] and not partial["over"]
    assert TableReport.objects.get(match=first_match).state == "draft"  # the desk sees it
    wrong = _post_json(client, check, {"deals": [{"breakdown": [{"carte": 3}, {}]}]}).json()
    assert not wrong["ok"] and wrong["error"]
    assert _post_json(client, check, {"deals": SHEET})["Content-Type"] == "application/json"
    submit = reverse("table:submit", args=[home.token, first_match.pk])
    payload = {"deals": SHEET, "client_key": str(uuid.uuid4()), "based_on": ""}
    first = _post_json(client, submit, payload)
    again = _post_json(client, submit, payload)
    assert first.json()["created"] and again.status_code == 200 and not again.json()["created"]
    answer = client.get(reverse("table:sheet", args=[away.token, first_match.pk]))
    assert b'value="accept"' in answer.content
    signed = client.post(
        reverse("table:sheet", args=[away.token, first_match.pk]), {"action": "accept"}
    )
    assert signed.status_code == 302
    assert Match.objects.get(pk=first_match.pk).winner_id == first_match.home_id


def test_dispute_goes_to_the_referee_who_decides(client, running, first_match, cards):
    home, away = cards
    reports.submit(home, first_match, SHEET, client_key=uuid.uuid4())
    sheet_url = reverse("table:sheet", args=[away.token, first_match.pk])
    assert client.post(sheet_url, {"action": "dispute", "comment": ""}).status_code == 400
    client.post(sheet_url, {"action": "dispute", "comment": "Deal 2 was ours"})
    # disputed: the players' part is over, a sheet typed now is refused
    submit = reverse("table:submit", args=[away.token, first_match.pk])
    late = _post_json(client, submit, {"deals": OTHER, "client_key": str(uuid.uuid4())})
    assert late.status_code == 400
    referee = User.objects.create_user("arbitro", password="x")
    TournamentRole.objects.create(tournament=running, user=referee, role=Role.REFEREE)
    client.force_login(referee)
    page = client.get(reverse("referee:disputes", args=[running.slug]))
    assert page.status_code == 200 and "Deal 2 was ours" in page.content.decode()
    assert 'name="based_on" value=""' in page.content.decode()  # no version in force yet
    report = TableReport.objects.get(match=first_match, state="disputed")
    choice = {"report": report.pk, "choice": "reported", "reason": "checked the paper"}
    unnamed = client.post(reverse("referee:disputes", args=[running.slug]), choice)
    assert unnamed.status_code == 428  # a decision names the version it was shown
    assert Match.objects.get(pk=first_match.pk).winner_id is None
    decided = client.post(
        reverse("referee:disputes", args=[running.slug]), {**choice, "based_on": ""}
    )
    assert decided.status_code == 302
    assert Match.objects.get(pk=first_match.pk).winner_id == first_match.home_id
    assert ChangeLog.objects.filter(action="table.decided", user=referee).exists()


def test_a_link_is_throttled_on_its_own(client, first_match, cards, monkeypatch):
    from django.core.cache import cache

    from scoresheets.views import _LinkThrottle

    cache.clear()
    monkeypatch.setattr(_LinkThrottle, "THROTTLE_RATES", {"table-link": "2/min"})
    url = reverse("table:line", args=[cards[0].token])
    assert [client.get(url).status_code for _ in range(3)] == [200, 200, 429]
    # another card at the same address (the venue's Wi-Fi) is not held back
    assert client.get(reverse("table:line", args=[cards[1].token])).status_code == 200
    cache.clear()


def test_the_referee_sees_which_deals_the_two_sheets_tell_otherwise(
    client, running, first_match, cards
):
    from scoresheets.views import differing_deals

    home, away = cards
    reports.submit(home, first_match, SHEET, client_key=uuid.uuid4())
    reports.dispute(away, first_match, "the second deal was ours", OTHER)
    report = TableReport.objects.get(match=first_match, state="disputed")
    differing = differing_deals(report.version.sheet, report.counter_version.sheet)
    assert 0 not in differing and 1 in differing  # the sheets agree on deal 1 only
    referee = User.objects.create_user("arbitro2", password="x")
    TournamentRole.objects.create(tournament=running, user=referee, role=Role.REFEREE)
    client.force_login(referee)
    page = client.get(reverse("referee:disputes", args=[running.slug])).content.decode()
    # each sheet marks its own deals that the other sheet tells otherwise
    expected = len([i for i in differing if i < len(SHEET)]) + len(
        [i for i in differing if i < len(OTHER)]
    )
    assert expected >= 2 and page.count('class="sd-differs"') == expected


def test_differing_deals_counts_a_deal_only_one_sheet_has():
    from scoresheets.views import differing_deals

    one = {"deals": [{"points": [3, 1], "breakdown": [{"scope": 3}, {"scope": 1}]}]}
    two = {"deals": [*one["deals"], {"points": [1, 0], "breakdown": [{"scope": 1}, {}]}]}
    assert differing_deals(one, one) == set()
    assert differing_deals(one, two) == {1}
    assert differing_deals(one, None) == set()


def test_a_revoked_or_throttled_link_answers_the_phone_in_json(
    client, first_match, cards, monkeypatch
):
    """The open sheet's script reads JSON: an HTML 410 or a text 429 made it say "no
    connection, it will be sent later" instead of the refusal."""
    from django.core.cache import cache

    from scoresheets.views import _LinkThrottle

    home, away = cards
    links.revoke(home)
    for name in ("table:check", "table:submit"):
        url = reverse(name, args=[home.token, first_match.pk])
        response = _post_json(client, url, {"deals": SHEET, "client_key": str(uuid.uuid4())})
        assert response.status_code == 410
        answer = response.json()
        assert answer["ok"] is False and "nuovo" in answer["error"]
    page = client.get(reverse("table:sheet", args=[home.token, first_match.pk]))
    assert page.status_code == 410 and page["Content-Type"].startswith("text/html")

    cache.clear()
    monkeypatch.setattr(_LinkThrottle, "THROTTLE_RATES", {"table-link": "1/min"})
    url = reverse("table:check", args=[away.token, first_match.pk])
    assert _post_json(client, url, {"deals": []}).status_code == 200
    throttled = _post_json(client, url, {"deals": []})
    assert throttled.status_code == 429 and throttled["Retry-After"]
    assert throttled.json()["ok"] is False and throttled.json()["error"]
    cache.clear()


def test_the_same_key_with_another_sheet_is_not_silently_dropped(client, first_match, cards):
    url = reverse("table:submit", args=[cards[0].token, first_match.pk])
    key = str(uuid.uuid4())
    assert _post_json(client, url, {"deals": SHEET, "client_key": key}).json()["created"]
    again = _post_json(client, url, {"deals": OTHER, "client_key": key})
    assert again.json()["ok"] is False


def test_a_closed_stage_sends_no_sheet_to_the_referee(client, running, first_match, cards):
    home, away = cards
    report = reports.submit(home, first_match, SHEET, client_key=uuid.uuid4()).report
    for match in Match.objects.filter(round__stage__tournament=running):
        results.save_result(match, reports.deals_payload(OTHER))  # the desk enters every result
    schedule.close_stage(running.stages.get())
    url = reverse("table:sheet", args=[away.token, first_match.pk])
    client.post(url, {"action": "dispute", "comment": "no", "report": report.pk})
    report.refresh_from_db()
    assert not reports.for_referee(report)


def test_a_card_sends_to_the_referee_only_its_own_unanswered_sheets(
    client, running, first_match, cards
):
    """Opening a line's card checks the time to countersign of that line's matches only: its
    cost must not grow with the room. Another table's overdue sheet waits for the referee's
    page or the beat sweep."""
    home, away = cards
    other = Match.objects.filter(round=first_match.round).exclude(pk=first_match.pk).get()
    assert {other.home_id, other.away_id}.isdisjoint({first_match.home_id, first_match.away_id})
    reports.submit(home, first_match, SHEET, client_key=uuid.uuid4())
    reports.submit(links.link_for(running, other.home), other, SHEET, client_key=uuid.uuid4())
    overdue = timezone.now() - timedelta(minutes=running.countersign_minutes + 1)
    TableReport.objects.update(submitted_at=overdue)

    card = client.get(reverse("table:line", args=[away.token]))
    assert card.status_code == 200
    assert TableReport.objects.get(match=first_match).state == TableReport.State.EXPIRED
    assert TableReport.objects.get(match=other).state == TableReport.State.AWAITING
    assert ChangeLog.objects.filter(action="table.expired").count() == 1
    # the tournament-wide check still runs where the whole tournament is read
    assert reports.expire_due(tournament=running) == 1
    assert TableReport.objects.get(match=other).state == TableReport.State.EXPIRED
