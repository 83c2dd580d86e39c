"""What accepting a record costs: the checks of a submission are one pass over its text and a
handful of queries, and listing records asks no query per record (the API's goal is 200
records a second; see docs/performance.md)."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given, settings
from hypothesis import strategies as st

from games import services
from games.exceptions import MalformedDocument
from tests.api import factories
from tests.api.conftest import client_for


def walk_refusal(document) -> str | None:
    """The refusal of a plain walk over every string of ``document``, the reference the one-pass
    check must agree with."""
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                return "nul_character"
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return "invalid_text"
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


# Text rich in what the check looks for: NULs, backslashes, "u0000" after backslashes, lone
# surrogates, and ordinary letters.
tricky_text = st.lists(
    st.sampled_from(["\x00", "\\", "u0000", "\\u0000", "\ud800", "\udfff", "a", "à", '"', "0"]),
    max_size=8,
).map("".join)
documents = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(tricky_text, children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_the_one_pass_text_check_refuses_what_a_walk_refuses(document):
    try:
        services.check_storable_text(document)
        refused = None
    except MalformedDocument as exc:
        refused = exc.code
    expected = walk_refusal(document)
    if expected == "nul_character" or refused == "nul_character":
        # a string with both a NUL and a surrogate: either refusal is right
        assert refused is not None and expected is not None
    else:
        assert refused == expected


@pytest.mark.django_db
def test_a_submission_through_the_api_asks_few_queries():
    organizer = factories.user("organizer", is_staff=True)
    tournament = factories.tournament(lines=4, organizer=organizer)
    first, second = factories.matches(tournament)[:2]
    client = client_for(organizer, token=True)
    # warm: the first request reads content types and the like once per process
    client.post(
        f"/api/v1/matches/{first.pk}/records/",
        json.dumps(factories.record(tournament, seed=1)),
        content_type="application/json",
    )
    body = json.dumps(factories.record(tournament, seed=2))
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"/api/v1/matches/{second.pk}/records/", body, content_type="application/json"
        )
    assert response.status_code == 202, response.content
    assert response.json()["result_version"] is None
    # token, match, role, the seats' players, lock, the match's versions, insert (and the
    # transaction's own statements); it was 15 when each check asked its own queries
    assert len(queries) <= 10, [q["sql"][:90] for q in queries]


@pytest.mark.django_db
def test_listing_records_asks_no_query_per_record(django_capture_on_commit_callbacks):
    organizer = factories.user("organizer", is_staff=True)
    tournament = factories.tournament(lines=5, organizer=organizer)
    client = client_for(organizer, token=True)

    def listing_queries():
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/api/v1/submissions/")
        assert response.status_code == 200
        return len(queries), response.json()["results"]

    for seed, match in enumerate(factories.matches(tournament)[:6]):
        with django_capture_on_commit_callbacks(execute=True):
            services.submit_record(match, factories.record(tournament, seed=seed), user=organizer)
        if seed == 0:
            one, _rows = listing_queries()
    six, rows = listing_queries()
    assert len(rows) == 6
    assert all(row["result_version"]["status"] == "in_force" for row in rows)
    assert all(row["is_standing"] for row in rows)
    assert six == one


def test_a_body_nested_at_the_limit_of_the_json_reader_is_refused_not_a_500():
    """Reading a body recurses one level less than writing it back: a nesting the reader just
    accepts made the text check fail with RecursionError (a 500)."""
    answers = set()
    for depth in range(500, 1100):
        for body in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
            try:
                services.decode_document(body.encode())
                answers.add("accepted")
            except MalformedDocument as exc:
                answers.add(exc.code)
    assert "too_deep" in answers  # the depth where reading works and writing does not
