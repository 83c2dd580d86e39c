"""Nothing a phone sends gives a 500 or stores half a sheet (the same promise as
tests/security/test_fuzz_no_500.py makes for the desk and the API)."""

import json

import pytest
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from scoresheets.services import links
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
