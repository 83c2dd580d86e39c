"""Nothing a phone sends gives a 500 or stores half a sheet (the same promise as
tests/security/test_fuzz_no_500.py makes for the desk and the API)."""

import json
import uuid

import pytest
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from scoresheets.models import TableReport
from scoresheets.services import links
from tests.scoresheets.test_reports import SHEET
from tests.security.test_fuzz_no_500 import FUZZ, JSON_VALUE, TEXT
from tournaments.models import MatchResult, ResultVersion

DEAL = st.fixed_dictionaries(
    {
        "breakdown": st.lists(
            st.dictionaries(st.sampled_from(["scope", "carte", "x y", "\x00"]), JSON_VALUE),
            max_size=3,
        )
        | JSON_VALUE
    },
    optional={"tiebreak": JSON_VALUE, "last_capture": JSON_VALUE},
)
BODY = st.fixed_dictionaries(
    {},
    optional={
        "deals": st.lists(DEAL, max_size=3) | JSON_VALUE,
        "client_key": JSON_VALUE | st.uuids().map(str),
        "based_on": JSON_VALUE,
        "time_expired": JSON_VALUE,
    },
)


@pytest.fixture
def phone(client, running, first_match):
    return client, links.link_for(running, first_match.home), first_match


@FUZZ
@given(body=BODY)
def test_check_and_submit_never_fail(phone, body):
    client, link, match = phone
    raw = json.dumps(body, ensure_ascii=True)
    for name in ("table:check", "table:submit"):
        url = reverse(name, args=[link.token, match.pk])
        response = client.post(url, data=raw, content_type="application/json")
        assert response.status_code < 500
    assert not MatchResult.objects.filter(match=match).exists()
    assert not ResultVersion.objects.filter(match=match, status="in_force").exists()


@FUZZ
@given(action=TEXT, comment=TEXT, report=TEXT)
def test_the_answer_form_never_fails(phone, action, comment, report):
    client, link, match = phone
    url = reverse("table:sheet", args=[link.token, match.pk])
    response = client.post(url, {"action": action, "comment": comment, "report": report})
    assert response.status_code < 500


# --- what the JSON reader takes and the database does not ---------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        # Python's json reads NaN/Infinity (and 1e400 as inf); PostgreSQL's jsonb takes neither,
        # so the draft the check endpoint keeps failed with a DataError
        '{"deals": [{"breakdown": [{"scope": NaN}, {}]}]}',
        '{"deals": [{"breakdown": [{"scope": 1e400}, {}]}]}',
        '{"deals": [{"breakdown": [{"scope": 1}, {}], "note": -Infinity}]}',
        # nested deeper than the JSON reader's recursion limit, within the size limit
        "[" * 15_000 + "]" * 15_000,
    ],
    ids=["nan", "1e400", "infinity-beside", "deep"],
)
def test_unstorable_numbers_and_deep_nesting_are_refused_not_a_500(phone, raw):
    client, link, first_match = phone
    client.raise_request_exception = False
    for name in ("table:check", "table:submit"):
        url = reverse(name, args=[link.token, first_match.pk])
        body = raw if not raw.startswith("{") else raw[:-1] + f', "client_key": "{uuid.uuid4()}"}}'
        response = client.post(url, body, content_type="application/json")
        assert response.status_code < 500, (name, response.status_code)
        assert response.json()["ok"] is False
    assert not TableReport.objects.filter(match=first_match).exclude(deals=[]).exists()


def test_a_valid_sheet_with_a_nan_beside_it_is_refused_not_a_500(phone):
    """The deals are read without the stray key, but what was typed is kept as sent."""
    client, link, first_match = phone
    client.raise_request_exception = False
    typed = json.dumps([{**SHEET[0], "note": 1}, SHEET[1]]).replace('"note": 1', '"note": NaN')
    url = reverse("table:submit", args=[link.token, first_match.pk])
    body = f'{{"deals": {typed}, "client_key": "{uuid.uuid4()}"}}'
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 400 and response.json()["ok"] is False
    assert not ResultVersion.objects.filter(match=first_match).exists()
