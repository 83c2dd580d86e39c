"""One result on the players' phones, request by request (``bench/phones.py`` measures their
CPU): what each request asks the database, held at most at today's count so that a change adding
a query to every phone's request shows here; and the caches that spare work on that path."""

import json
import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from scoresheets import views
from scoresheets.services import links
from tests.scoresheets.test_reports import SHEET
from tournaments.models import Entry, Match
from tournaments.signals import on_commit_once

KEY = re.compile(r'data-client-key="([^"]+)"')
REPORT = re.compile(r'name="report" value="(\d+)"')
# Today's queries of each request before its commit, on PostgreSQL and SQLite (savepoints
# included); before the phones' path was cut down: 8, 11, 34, 4 and 26.
MOST = {"sheet page": 6, "check": 9, "sync": 22, "status poll": 2, "countersign": 22}


@pytest.fixture
def sides(running, first_match):
    return links.link_for(running, first_match.home), links.link_for(running, first_match.away)


def _asked(counts, kind, call):
    # what runs after the commit is left out: in a test it never commits, and without a broker
    # the ratings would run there (bench/phones.py counts it, with a broker)
    with CaptureQueriesContext(connection) as queries:
        response = call()
    assert response.status_code < 400, response.content[:300]
    counts[kind] = max(counts.get(kind, 0), len(queries))
    return response


def test_one_result_through_the_phones_asks_no_more_queries_than_today(client, first_match, sides):
    home, away = sides
    counts: dict[str, int] = {}
    sheet = reverse("table:sheet", args=[home.token, first_match.pk])
    page = _asked(counts, "sheet page", lambda: client.get(sheet)).content.decode()
    key = KEY.search(page).group(1)
    typed = json.dumps({"deals": SHEET, "time_expired": False})
    for _ in range(2):  # the first change, then a pause in the typing
        _asked(
            counts,
            "check",
            lambda: client.post(f"{sheet}check/", typed, content_type="application/json"),
        )
    sent = {"deals": SHEET, "client_key": key, "based_on": "", "lines": None}
    synced = _asked(
        counts,
        "sync",
        lambda: client.post(f"{sheet}sync/", json.dumps(sent), content_type="application/json"),
    )
    assert synced.json()["status"] == "waiting"
    _asked(counts, "sheet page", lambda: client.get(sheet))
    polled = _asked(counts, "status poll", lambda: client.get(f"{sheet}status/", {"key": key}))
    assert polled.json() == {"ok": True, "status": "waiting"}

    other = reverse("table:sheet", args=[away.token, first_match.pk])
    page = _asked(counts, "sheet page", lambda: client.get(other)).content.decode()
    form = {"action": "accept", "report": REPORT.search(page).group(1)}
    signed = _asked(counts, "countersign", lambda: client.post(other, form))
    assert signed.status_code == 302
    _asked(counts, "sheet page", lambda: client.get(signed["Location"]))
    polled = _asked(counts, "status poll", lambda: client.get(f"{sheet}status/", {"key": key}))
    assert polled.json() == {"ok": True, "status": "countersigned"}
    first_match.refresh_from_db()
    assert first_match.status == Match.Status.DONE
    assert {kind: min(n, MOST[kind]) for kind, n in counts.items()} == counts


def test_another_links_poll_learns_nothing_of_a_sheet(client, running, first_match, sides):
    """The poll reads the sheet with its match, then checks the link's rights on that match."""
    home, _away = sides
    sheet = reverse("table:sheet", args=[home.token, first_match.pk])
    key = KEY.search(client.get(sheet).content.decode()).group(1)
    sent = {"deals": SHEET, "client_key": key, "based_on": "", "lines": None}
    client.post(f"{sheet}sync/", json.dumps(sent), content_type="application/json")
    entry = (
        Entry.objects.filter(tournament=running)
        .exclude(line_id__in=[first_match.home_id, first_match.away_id])
        .select_related("line")
        .first()
    )
    stranger = links.link_for(running, entry.line)
    other = reverse("table:status", args=[stranger.token, first_match.pk])
    assert client.get(other, {"key": key}).status_code == 404


def test_the_service_workers_version_follows_a_changed_shell_file(tmp_path, monkeypatch):
    """Its hash is kept while the shell's files stay the same, and made again when one changes
    (a new release must replace the phones' copies)."""
    shell = tmp_path / "table.css"
    shell.write_text("body { color: black }")
    monkeypatch.setattr(views, "_SHELL_FILES", ("css/table.css",))
    monkeypatch.setattr("django.contrib.staticfiles.finders.find", lambda name: str(shell))
    views._shell_hashed.clear()
    first = views._shell_version()
    assert views._shell_version() == first
    shell.write_text("body { color: darkgreen }")
    assert views._shell_version() != first


def test_a_call_queued_once_a_commit_still_runs_after_a_rolled_back_savepoint(
    db, django_capture_on_commit_callbacks
):
    """Two change-log entries of one step forget the stamp once; a call queued in a savepoint
    rolled back does not stand for a later one."""
    ran: list[int] = []
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        on_commit_once(ran.append, 1)
        on_commit_once(ran.append, 1)
        on_commit_once(ran.append, 2)
    assert ran == [1, 2]
    ran.clear()
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        try:
            with transaction.atomic():
                on_commit_once(ran.append, 3)
                raise RuntimeError
        except RuntimeError:
            pass
        on_commit_once(ran.append, 3)
    assert ran == [3]
