"""Sheets from a phone's outbox (scoresheets/services/offline.py) on PostgreSQL: sent again and
again, late against the desk, against a changed match, two phones of one table in either
order, one phone with the other line's one-time code; and a property test of the outbox."""

import contextlib
import json
import uuid

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoresheets.exceptions import ReportError
from scoresheets.models import COUNTERSIGN_TRIES, CountersignCode, TableReport
from scoresheets.room import room_states
from scoresheets.services import links, offline
from tests.scoresheets.test_reports import OTHER, SHEET
from tournaments.models import Entry, Match, ResultVersion
from tournaments.services import results

State = TableReport.State
V = ResultVersion.Status


@pytest.fixture
def sides(running, first_match):
    return (
        links.link_for(running, first_match.home),
        links.link_for(running, first_match.away),
    )


def _lines(match):
    return [match.home_id, match.away_id]


def _sync(link, match, sheet=SHEET, key=None, **kwargs):
    kwargs.setdefault("lines", _lines(match))
    return offline.sync(link, match, sheet, client_key=key or uuid.uuid4(), **kwargs)


def _post(client, link, match, data):
    url = reverse("table:sync", args=[link.token, match.pk])
    return client.post(url, json.dumps(data), content_type="application/json")


def test_a_sheet_sent_twenty_times_arrives_once(client, first_match, sides):
    home, _away = sides
    data = {"deals": SHEET, "client_key": str(uuid.uuid4()), "based_on": ""}
    data["lines"] = _lines(first_match)
    answers = [_post(client, home, first_match, {**data, "queued": n > 0}) for n in range(20)]
    assert {a.status_code for a in answers} == {200}
    assert [a.json()["created"] for a in answers] == [True] + [False] * 19
    assert {a.json()["status"] for a in answers} == {"waiting"}
    assert ResultVersion.objects.filter(match=first_match).count() == 1
    assert TableReport.objects.get(match=first_match).state == State.AWAITING
    status = client.get(
        reverse("table:status", args=[home.token, first_match.pk]), {"key": data["client_key"]}
    )
    assert status.json() == {"ok": True, "status": "waiting"}


@pytest.mark.parametrize("order", ["home first", "away first"])
@pytest.mark.parametrize("same", [True, False])
def test_two_phones_of_one_table_in_either_order(first_match, sides, order, same):
    home, away = sides
    sends = [(home, SHEET), (away, SHEET if same else OTHER)]
    if order == "away first":
        sends.reverse()
    first = _sync(sends[0][0], first_match, sends[0][1])
    second = _sync(sends[1][0], first_match, sends[1][1])
    assert first.status == offline.Status.WAITING
    first_match.refresh_from_db()
    if same:
        assert first_match.status == Match.Status.DONE
        assert results.in_force(first_match).sheet["result"] is not None
    else:
        assert first_match.status != Match.Status.DONE
        assert second.report.state == State.DISPUTED
        assert offline.status_of(TableReport.objects.get(pk=first.report.pk)) == "referee"


def test_the_sheets_calls_need_no_csrf_token_but_must_come_from_its_page(first_match, sides):
    """A queued sheet carries no CSRF token that can rotate under it (a login on the same
    phone, a session that ended): the card is the credential. A page of another site cannot
    make the call: not from its origin, nor with a form's content type (docs/security.md)."""
    from django.test import Client

    home, _away = sides
    phone = Client(enforce_csrf_checks=True)
    page = phone.get(reverse("table:sheet", args=[home.token, first_match.pk]))
    here = f"http://{page.wsgi_request.get_host()}"
    sync = reverse("table:sync", args=[f"k{home.pk}", first_match.pk])
    check = reverse("table:check", args=[f"k{home.pk}", first_match.pk])
    data = {"deals": SHEET, "client_key": str(uuid.uuid4()), "lines": _lines(first_match)}
    body = json.dumps(data)

    def post(url, **headers):
        headers.setdefault("content_type", "application/json")
        return phone.post(url, body, **headers)

    # another site's page, and a form (even one that holds JSON)
    for refused in (
        post(sync, HTTP_ORIGIN="https://evil.example"),
        post(sync, HTTP_SEC_FETCH_SITE="same-site"),
        post(sync, content_type="text/plain", HTTP_ORIGIN=here),
        post(check, content_type="application/x-www-form-urlencoded"),
        # a body with no type (a Blob's), from a browser that sends neither Origin nor
        # Sec-Fetch-Site: another site may send it without asking
        post(check, content_type=""),
    ):
        assert refused.status_code == 403 and refused.json()["ok"] is False
    assert not TableReport.objects.exclude(state=State.DRAFT).exists()

    # the phone's own page, without any CSRF token (as after a login rotated it)
    phone.cookies.pop("csrftoken", None)
    assert post(check, HTTP_ORIGIN=here, HTTP_SEC_FETCH_SITE="same-origin").status_code == 200
    sent = post(sync, HTTP_ORIGIN=here, HTTP_SEC_FETCH_SITE="same-origin")
    assert sent.status_code == 200 and sent.json()["status"] == "waiting"
    # the answer forms of the page still want Django's token
    dispute = phone.post(reverse("table:sheet", args=[f"k{home.pk}", first_match.pk]))
    assert dispute.status_code == 403


def test_the_sheets_calls_accept_the_origins_the_desk_trusts(first_match, sides, settings):
    """Behind a proxy that passes Django another host name or port than the phone used, the
    operator lists the public address in ``CSRF_TRUSTED_ORIGINS`` (the desk's forms need it):
    the sheet's calls from that address are not refused, a sibling subdomain still is."""
    from django.test import Client

    settings.CSRF_TRUSTED_ORIGINS = ["https://tornei.example.org", "https://*.circolo.example"]
    home, _away = sides
    phone = Client(enforce_csrf_checks=True)
    phone.get(reverse("table:sheet", args=[home.token, first_match.pk]))
    check = reverse("table:check", args=[f"k{home.pk}", first_match.pk])
    body = json.dumps(
        {"deals": SHEET, "client_key": str(uuid.uuid4()), "lines": _lines(first_match)}
    )

    def post(origin, site="same-origin"):
        return phone.post(
            check,
            body,
            content_type="application/json",
            HTTP_ORIGIN=origin,
            HTTP_SEC_FETCH_SITE=site,
        )

    assert post("https://tornei.example.org").status_code == 200
    assert post("https://sala.circolo.example").status_code == 200
    assert post("https://evil.example.org").status_code == 403
    assert post("http://tornei.example.org").status_code == 403
    assert post("https://tornei.example.org", site="same-site").status_code == 403


def test_a_late_sheet_meeting_a_desk_result_waits_for_the_referee(first_match, sides):
    home, away = sides
    opened = ""  # the phone opened the sheet before any result
    results.save_result(first_match, reports_payload(OTHER))
    late = _sync(home, first_match, SHEET, based_on=opened, queued=True)
    assert late.status == offline.Status.REFEREE
    assert late.report.state == State.REFERRED
    assert late.report.version.status == V.AWAITING
    assert results.in_force(first_match).source != "players"  # the desk's result stands
    # the same sheet again: nothing more
    again = _sync(home, first_match, SHEET, key=late.report.client_key, queued=True)
    assert not again.created and ResultVersion.objects.filter(match=first_match).count() == 2
    # a late sheet that says what is in force agrees: nothing for the referee
    agreeing = _sync(away, first_match, OTHER, based_on=opened, queued=True)
    assert agreeing.status == offline.Status.COUNTERSIGNED
    assert ResultVersion.objects.filter(match=first_match).count() == 2


def reports_payload(sheet):
    from scoresheets.services import reports

    return reports.deals_payload(sheet)


def test_a_sheet_for_a_changed_match_is_refused_and_nothing_stored(client, first_match, sides):
    home, _away = sides
    data = {"deals": SHEET, "client_key": str(uuid.uuid4()), "based_on": ""}
    repaired = _post(client, home, first_match, {**data, "lines": [first_match.home_id, 999999]})
    assert repaired.status_code == 409 and repaired.json()["keep"]
    assert "pairing" in repaired.json()["error"] or "abbinamento" in repaired.json()["error"]
    Entry.objects.filter(line=first_match.away).update(withdrawn=True)
    withdrawn = _post(client, home, first_match, {**data, "lines": _lines(first_match)})
    assert withdrawn.status_code == 409
    assert not TableReport.objects.exclude(state=State.DRAFT).exists()
    assert not ResultVersion.objects.filter(match=first_match).exists()


def test_the_other_lines_code_countersigns_on_one_phone(client, first_match, sides):
    home, away = sides
    code = offline.code_for(first_match, "away").code
    signed = _sync(home, first_match, code=code.lower())
    assert signed.status == offline.Status.COUNTERSIGNED
    assert signed.report.signed_with_code
    first_match.refresh_from_db()
    assert first_match.status == Match.Status.DONE
    assert CountersignCode.objects.get(match=first_match, side="away").used_at is not None
    # the countersigning line sees what it signed on its own link
    page = client.get(reverse("table:sheet", args=[away.token, first_match.pk]))
    assert b"shown-sheet" in page.content
    # never reused: the same code on another sheet is not a signature
    other = _sync(
        home, first_match, OTHER, code=code, based_on=results.in_force(first_match).number
    )
    assert other.status == offline.Status.REFEREE


def test_wrong_codes_count_and_the_fifth_sends_the_sheet_to_the_referee(client, first_match, sides):
    home, _away = sides
    offline.code_for(first_match, "away")
    data = {"deals": SHEET, "based_on": "", "lines": _lines(first_match), "code": "WRONG1"}
    for n in range(COUNTERSIGN_TRIES - 1):
        answer = _post(client, home, first_match, {**data, "client_key": str(uuid.uuid4())})
        assert answer.status_code == 400
        assert answer.json()["tries_left"] == COUNTERSIGN_TRIES - 1 - n
    assert not ResultVersion.objects.filter(match=first_match).exists()
    last = _post(client, home, first_match, {**data, "client_key": str(uuid.uuid4())})
    assert last.json()["status"] == "referee"
    assert CountersignCode.objects.get(match=first_match, side="away").locked_at is not None
    assert TableReport.objects.get(match=first_match, state=State.REFERRED)


def test_a_code_found_wrong_at_sync_sends_the_sheet_to_the_referee(first_match, sides):
    home, _away = sides
    offline.code_for(first_match, "away")
    synced = _sync(home, first_match, code="ZZZZZZ", queued=True)
    assert synced.status == offline.Status.REFEREE
    assert "wrong" in synced.report.answer_comment or "errato" in synced.report.answer_comment


def test_the_room_shows_the_last_contact_of_a_tables_phones(client, running, first_match, sides):
    home, _away = sides
    client.get(reverse("table:line", args=[home.token]))
    tables = {t.match_id: t for t in room_states(first_match.round)}
    table = tables[first_match.pk]
    assert table.on_a_phone and table.last_contact is not None
    assert (timezone.now() - table.last_contact).total_seconds() < 60


def test_the_service_worker_and_the_manifest(client, first_match, sides):
    home, _away = sides
    worker = client.get(reverse("table:service-worker"))
    assert worker.status_code == 200 and worker["Content-Type"].startswith("text/javascript")
    text = worker.content.decode()
    assert "/static/js/table-sheet.js" in text and "/desk/" not in text
    manifest = client.get(reverse("table:manifest", args=[home.token]))
    assert manifest.json()["start_url"] == reverse("table:line", args=[f"k{home.pk}"])
    assert manifest.json()["scope"] == "/p/"


def test_an_unknown_key_is_refused(first_match, sides):
    with pytest.raises(ReportError):
        _sync(sides[0], first_match, key="not-a-key")


# --------------------------------------------------------------------------- the property

# A phone's sheet: which side's phone, which memory of the match, with the other line's code.
PHONES = st.lists(
    st.tuples(st.sampled_from(["home", "away"]), st.sampled_from([0, 1]), st.booleans()),
    min_size=1,
    max_size=3,
)


@st.composite
def outboxes(draw):
    """Each phone's sends: at least one arrives (the outbox sends until one is answered), some
    arrive again (their answers were lost), all interleaved in any order."""
    phones = draw(PHONES)
    sends = [i for i, _phone in enumerate(phones) for _ in range(draw(st.integers(1, 3)))]
    order = draw(st.permutations(sends))
    return phones, list(order)


def _summary(match):
    """What the server ends with, whatever the ids: the result in force, the sheets waiting
    for the referee, and how many reports each sheet left."""
    current = results.in_force(match)

    def key(version):
        return json.dumps(version.sheet.get("result"), sort_keys=True) if version else None

    waiting = sorted(key(v) for v in ResultVersion.objects.filter(match=match, status=V.AWAITING))
    per_key = sorted(
        TableReport.objects.filter(match=match)
        .exclude(state=State.DRAFT)
        .values_list("side", "state")
    )
    return key(current), waiting, per_key


def _play(running, match, phones, order):
    sides = {
        "home": links.link_for(running, match.home),
        "away": links.link_for(running, match.away),
    }
    code = {s: offline.code_for(match, s).code for s in ("home", "away")}
    keys = [uuid.uuid4() for _ in phones]
    sent = set()
    for index in order:
        side, memory, with_code = phones[index]
        other = "away" if side == "home" else "home"
        with contextlib.suppress(ReportError):  # a refusal stores nothing: the phone keeps it
            _sync(
                sides[side],
                match,
                [SHEET, OTHER][memory],
                key=keys[index],
                code=code[other] if with_code else "",
                queued=index in sent,
            )
        sent.add(index)
    match.refresh_from_db()
    return _summary(match)


def _rolled_back(function, *args):
    with transaction.atomic():
        found = function(*args)
        transaction.set_rollback(True)
    return found


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(outboxes())
def test_the_outbox_ends_with_what_a_perfect_network_gives(running, first_match, outbox):
    """Cuts (a send lost: the next one is its first arrival), duplicates (an answer lost) and
    reorderings: the server ends as if each sheet had arrived once, at its first arrival."""
    phones, order = outbox
    perfect = list(dict.fromkeys(order))  # each sheet once, in the order of its first arrival
    faulty = _rolled_back(_play, running, first_match, phones, order)
    clean = _rolled_back(_play, running, first_match, phones, perfect)
    assert faulty == clean


def test_the_cards_token_is_traded_for_a_cookie(client, first_match, sides):
    home, away = sides
    opened = client.get(reverse("table:sheet", args=[home.token, first_match.pk]))
    assert opened.status_code == 200
    cookie = opened.cookies["scopa_links"]
    assert cookie["httponly"] and cookie["path"] == "/p/"
    page = opened.content.decode()
    assert f"/p/k{home.pk}/m/{first_match.pk}/sync/" in page
    assert home.token not in page  # later requests carry no token
    tokenless = reverse("table:sheet", args=[f"k{home.pk}", first_match.pk])
    assert client.get(tokenless).status_code == 200
    # a second card on the same phone joins the first one
    client.get(reverse("table:line", args=[away.token]))
    assert client.get(reverse("table:line", args=[f"k{away.pk}"])).status_code == 200
    assert client.get(tokenless).status_code == 200
    # another phone, or one whose data was cleared, must scan the card again
    client.cookies.clear()
    refused = client.get(tokenless)
    assert refused.status_code == 403
    # a forged cookie opens nothing
    client.cookies["scopa_links"] = "eyJ9Ijoi:forged"
    assert client.get(tokenless).status_code == 403


def test_the_desk_prints_the_codes_and_sees_the_phones(client, running, first_match, sides):
    from django.contrib.auth.models import User

    home, _away = sides
    organizer = User.objects.create_user("org")
    running.organizers.add(organizer)
    client.get(reverse("table:line", args=[home.token]))  # a phone of table 1 reaches us
    client.force_login(organizer)
    links.link_for(running, first_match.home, first_match)
    links.link_for(running, first_match.away, first_match)
    args = {"slug": running.slug, "round_id": first_match.round_id}
    cards = client.get(reverse("desk:print", kwargs=args)).content.decode()
    for side in ("home", "away"):
        assert offline.code_for(first_match, side).code in cards
    room = client.get(reverse("room:round", kwargs=args)).content.decode()
    assert "ultimo contatto" in room  # the room in Italian: the phones' last contact
