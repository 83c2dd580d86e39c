"""The outbox's own script (public/static/js/table-outbox.js) under Node, against the answers a
hall's network really gives: no network, a busy server, a hotel's login page in the site's
place, a refusal nobody can read (an HTML 403: once, the sheet stayed "not sent yet" forever),
a phone that no longer holds the card; and a property over random schedules of all of these.
No browser: the sending is one function over a store and ``fetch``, the same file the pages
and the service worker load."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "public" / "static" / "js" / "table-outbox.js"
RUNNER = Path(__file__).with_name("run_outbox.js")
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

HTML_403 = {"status": 403, "type": "text/html", "body": "<h1>403 Forbidden</h1><p>CSRF…</p>"}
LOGIN_PAGE = {"status": 200, "type": "text/html", "body": "<h1>Hotel Wi-Fi: log in</h1>"}
PAGE = {"status": 200, "type": "text/html", "body": "<h1>the sheet</h1>"}
BUSY = {"status": 503, "type": "text/html", "body": "<h1>503</h1>"}
NO_KEY = {"status": 403, "type": "application/json", "body": '{"ok": false, "error": "scan"}'}
WAITING = {"status": 200, "type": "application/json", "body": '{"ok": true, "status": "waiting"}'}
TOO_MANY = {"status": 429, "type": "application/json", "body": '{"ok": false, "error": "wait"}'}


def _run(tmp_path, *cases, status="queued", mended=False):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"status": status, "answers": a, "mended": mended} for a in cases]))
    done = subprocess.run(
        [NODE, str(RUNNER), str(MODULE), str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(done.stdout)


def _posts(found):
    return [r for r in found["requests"] if r["method"] == "POST"]


def test_an_unreadable_refusal_fetches_the_page_and_resends_once(tmp_path):
    recovered, refused, no_key, not_the_site = _run(
        tmp_path,
        [HTML_403, PAGE, WAITING],
        [HTML_403, PAGE, HTML_403, WAITING],  # the last answer is never asked for
        [NO_KEY, WAITING],
        ["down", BUSY, LOGIN_PAGE, WAITING],
    )
    # refused once without a word: the page again, the same sheet again, and it arrived
    assert [r["method"] for r in recovered["requests"]] == ["POST", "GET", "POST"]
    assert recovered["requests"][1]["url"] == "/p/k1/m/1/"
    assert {p["body"]["client_key"] for p in _posts(recovered)} == {
        "4f0c3c56-7c43-4c43-9f39-111111111111"
    }
    assert recovered["record"]["outbox"]["status"] == "waiting"
    assert [p["body"]["code"] for p in _posts(recovered)] == ["AB12CD", "AB12CD"]

    # refused again: no loop of resends, the page says what to do; the code stays
    assert len(_posts(refused)) == 2
    assert refused["record"]["outbox"]["status"] == "blocked"
    assert refused["record"]["outbox"]["code"] == "AB12CD"

    # this phone no longer holds the card: the server's own sentence, no resend
    assert len(_posts(no_key)) == 1
    assert no_key["record"]["outbox"]["status"] == "blocked"
    assert no_key["record"]["outbox"]["error"] == "scan"

    # no network, a busy server, a login page answering for the site: queued, sent again
    assert len(_posts(not_the_site)) == 4
    assert [p["body"]["queued"] for p in _posts(not_the_site)] == [False, True, True, True]
    assert not_the_site["record"]["outbox"] == {
        "status": "waiting",
        "tries": 3,
        "code": "",
        "error": "",
    }


def test_a_blocked_sheet_goes_again_from_the_next_page_opened(tmp_path):
    """A page of the app opened again (table-app.js sends blocked sheets on its first flush)
    sends it as it was: its key, its code."""
    (found,) = _run(tmp_path, [WAITING], status="blocked")
    assert [p["body"]["code"] for p in _posts(found)] == ["AB12CD"]
    assert found["record"]["outbox"]["status"] == "waiting"


# --------------------------------------------------------------------------- the property

# What a hall's network may do to one request: nothing reaches the site; the site gets the sheet
# and the answer is lost; the site is busy; a login page or a proxy answers in its place; the
# phone lost the card; or the answer arrives.
FAULTS = st.sampled_from(["down", "lost", BUSY, TOO_MANY, LOGIN_PAGE, HTML_403, NO_KEY, "ok"])


# no shrinking: each try is a Node process; a failure names its schedule
@settings(max_examples=5, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(st.lists(FAULTS, max_size=12), min_size=25, max_size=25))
def test_whatever_the_network_does_the_sheet_arrives_as_queued(tmp_path_factory, schedules):
    """Random cuts, lost answers, repetitions and refusals, then a network that works (and, if
    the page asked for it, the card's link opened again): the sheet ends where one send on a
    perfect network puts it, the site got it only ever under its one key, with the deals and
    the other line's code as queued, and the phone stopped sending once it heard back. What
    the site makes of repetitions and reorderings is the service's property
    (test_offline.py::test_the_outbox_ends_with_what_a_perfect_network_gives)."""
    found = _run(tmp_path_factory.mktemp("outbox"), *schedules, mended=True)
    for schedule, one in zip(schedules, found, strict=True):
        posts = _posts(one)
        said = {"schedule": schedule, "record": one["record"]}
        assert one["record"]["outbox"]["status"] == "waiting", said
        assert set(one["arrived"]) == {"4f0c3c56-7c43-4c43-9f39-111111111111"}, said
        deals = {json.dumps(p["body"]["deals"]) for p in posts}
        assert deals == {'[{"breakdown": [{"scope": "1"}, {}]}]'}, said
        assert {p["body"]["code"] for p in posts} == {"AB12CD"}, said
        assert one["requests"][-1]["method"] == "POST", said
        # one request an answer, and a refusal nobody can read costs the page and one resend
        assert len(one["requests"]) <= len(schedule) + 2, said
