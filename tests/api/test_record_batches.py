"""POST /api/v1/records/: many matches' records in one request, each with its own outcome.

A refused record is refused alone, whatever a client sends in it (never a 500 for the whole
batch); each record keeps the one-record endpoint's size limit; and a message of records
submitted together is verified within its time budget, a backlog or not."""

import json
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from games import services, tasks
from games.models import Submission, content_hash
from tests.api import factories
from tests.api.conftest import client_for
from tournaments.models import Match

pytestmark = pytest.mark.django_db

URL = "/api/v1/records/"


def post(client, body):
    if not isinstance(body, str | bytes):
        body = json.dumps(body)
    return client.post(URL, data=body, content_type="application/json")


def named(match, document):
    return {**document, "match": match.pk}


def test_the_route_is_named():
    assert reverse("record-batch") == URL


def test_each_record_is_stored_and_verified_with_its_own_answer(
    tournament, organizer, django_capture_on_commit_callbacks
):
    matches = factories.matches(tournament)
    records = [factories.record(tournament, seed=seed) for seed in range(3)]
    with django_capture_on_commit_callbacks(execute=True):
        response = post(
            client_for(organizer, token=True),
            [named(m, r) for m, r in zip(matches, records, strict=True)],
        )
    assert response.status_code == 207, response.content
    results = response.json()["results"]
    assert [item["index"] for item in results] == [0, 1, 2]
    assert {item["status"] for item in results} == {202}
    assert [item["submission"]["match"] for item in results] == [m.pk for m in matches]
    for match, item in zip(matches, results, strict=True):
        submission = Submission.objects.get(pk=item["submission"]["id"])
        assert submission.match == match
        assert submission.state == Submission.State.VERIFIED  # eager verification in tests
        assert "match" not in submission.document  # the envelope is not part of the record
        assert submission.content_hash == content_hash(
            services.record_body(named(match, records[matches.index(match)]))
        )


def test_a_refused_record_holds_back_nothing_else(tournament, organizer):
    """Each refusal has the one-record endpoint's status and error body; the rest is stored."""
    matches = factories.matches(tournament)
    other = factories.tournament(lines=2)  # not the organizer's, not public
    other.is_public = False
    other.save(update_fields=["is_public"])
    foreign = factories.matches(other)[0]
    good = named(matches[0], factories.record(tournament, seed=1))
    unreadable = named(matches[1], {"schema": "scopa-match/1", "variant": "scopa"})
    wrong_variant = named(matches[2], factories.record(tournament, seed=2, knockout=True))
    body = [
        good,
        unreadable,
        {"schema": "scopa-match/1"},  # no match named
        named(foreign, factories.record(other, seed=3)),
        {"match": 10**8, **factories.record(tournament, seed=4)},
        wrong_variant,
        "not an object",
    ]
    response = post(client_for(organizer, token=True), body)
    assert response.status_code == 207, response.content
    results = response.json()["results"]
    statuses = [item["status"] for item in results]
    assert statuses == [202, 400, 400, 404, 404, 422, 400]
    codes = [item.get("error", {}).get("code") for item in results]
    assert codes[1] and codes[2] == "no_match" and codes[5] == "knockout_mismatch"
    assert codes[6] == "invalid_type"
    assert all(item["error"]["message"] for item in results[1:])
    assert Submission.objects.count() == 1
    assert Submission.objects.get().match == matches[0]


def test_a_match_the_user_may_see_but_not_submit_is_403(tournament, organizer):
    """A player may submit their own match's record, not another match of the tournament."""
    tournament.is_public = True
    tournament.save(update_fields=["is_public"])
    own, *others = factories.matches(tournament)
    player = factories.players_user(own.home)
    theirs = next(m for m in others if own.home_id not in (m.home_id, m.away_id))
    response = post(
        client_for(player, token=True),
        [
            named(own, factories.record(tournament, seed=1)),
            named(theirs, factories.record(tournament, seed=2)),
        ],
    )
    assert [item["status"] for item in response.json()["results"]] == [202, 403]
    assert response.json()["results"][1]["error"]["code"] == "permission_denied"
    assert Submission.objects.get().match == own


def test_the_same_record_again_is_200_and_versions_follow_in_order(tournament, organizer):
    match = factories.matches(tournament)[0]
    first, second = (named(match, factories.record(tournament, seed=s)) for s in (1, 2))
    client = client_for(organizer, token=True)
    assert post(client, [first]).json()["results"][0]["status"] == 202
    results = post(client, [first, second, second]).json()["results"]
    assert [item["status"] for item in results] == [200, 202, 200]
    assert [item["submission"]["version"] for item in results] == [1, 2, 2]
    assert results[1]["submission"]["id"] == results[2]["submission"]["id"]
    assert list(
        Submission.objects.filter(match=match).values_list("version", flat=True).order_by("version")
    ) == [1, 2]


def test_the_per_match_caps_count_the_records_of_the_batch_itself(
    tournament, organizer, monkeypatch
):
    monkeypatch.setattr(services.submitting, "MAX_VERSIONS_PER_MATCH", 2)
    match = factories.matches(tournament)[0]
    body = [named(match, factories.record(tournament, seed=s)) for s in (1, 2, 3)]
    results = post(client_for(organizer, token=True), body).json()["results"]
    assert [item["status"] for item in results] == [202, 202, 429]
    assert results[2]["error"]["code"] == "too_many_versions"
    assert Submission.objects.filter(match=match).count() == 2


@pytest.mark.parametrize(
    "body, status, code",
    [
        ("{}", 400, "invalid_type"),
        ("[]", 400, "invalid_type"),
        ("[1, 2", 400, "malformed_json"),
        (b"\xff[]", 400, "malformed_json"),
    ],
)
def test_a_body_that_is_not_a_batch_is_refused_whole(organizer, body, status, code):
    response = post(client_for(organizer, token=True), body)
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code


def test_a_batch_holds_a_bounded_number_of_records(tournament, organizer, monkeypatch):
    monkeypatch.setattr(services.documents, "MAX_BATCH_RECORDS", 2)
    match = factories.matches(tournament)[0]
    body = [named(match, factories.record(tournament, seed=s)) for s in (1, 2, 3)]
    response = post(client_for(organizer, token=True), body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "too_many_records"
    assert Submission.objects.count() == 0


def test_a_batch_over_the_size_limit_is_413(tournament, organizer, monkeypatch):
    # read by the view (the Content-Length) and by the body's decoding
    monkeypatch.setattr(services, "MAX_BATCH_BYTES", 1000)
    monkeypatch.setattr(services.documents, "MAX_BATCH_BYTES", 1000)
    match = factories.matches(tournament)[0]
    response = post(client_for(organizer, token=True), [named(match, factories.record(tournament))])
    assert response.status_code == 413
    assert Submission.objects.count() == 0


def test_anonymous_cannot_submit_a_batch(tournament):
    match = factories.matches(tournament)[0]
    response = post(client_for(), [named(match, factories.record(tournament))])
    assert response.status_code == 401
    assert Submission.objects.count() == 0


def test_a_batch_costs_the_same_queries_whatever_its_size(django_capture_on_commit_callbacks):
    """The checks read seat names once per tournament, the store locks and reads the matches in
    one query each and inserts in one: ten records cost what two do."""
    organizer = factories.user("organizer-q", is_staff=True)
    tournament = factories.tournament(lines=7, organizer=organizer)
    matches = factories.matches(tournament)
    client = client_for(organizer, token=True)

    def queries(chosen, seed):
        body = [named(m, factories.record(tournament, seed=seed + i)) for i, m in enumerate(chosen)]
        with (
            CaptureQueriesContext(connection) as captured,
            django_capture_on_commit_callbacks(execute=False),
        ):
            response = post(client, body)
        assert {item["status"] for item in response.json()["results"]} == {202}
        return len(captured)

    assert queries(matches[:2], 100) == queries(matches[2:12], 200)


def test_records_submitted_together_go_to_the_broker_as_one_message_per_batch(
    tournament, organizer, django_capture_on_commit_callbacks, monkeypatch
):
    """One message per BATCH_SIZE records, each naming its records (eager here: the message runs
    in-process, and every record of it ends verified)."""
    from games import tasks

    monkeypatch.setattr(services.enqueueing, "BATCH_SIZE", 2)
    sent = []
    original = tasks.verify_submissions.apply_async

    def count(args, **kwargs):
        sent.append(list(args[0]))
        return original(args, **kwargs)

    monkeypatch.setattr(tasks.verify_submissions, "apply_async", count)
    matches = factories.matches(tournament)
    body = [named(m, factories.record(tournament, seed=i)) for i, m in enumerate(matches)]
    with django_capture_on_commit_callbacks(execute=True):
        results = post(client_for(organizer, token=True), body).json()["results"]
    ids = [item["submission"]["id"] for item in results]
    assert sent == [ids[:2], ids[2:]]
    assert set(Submission.objects.values_list("state", flat=True)) == {"verified"}


@pytest.mark.django_db(transaction=True)
def test_on_the_embedded_default_the_answer_gives_the_state_the_verification_reached(
    tournament, organizer
):
    """Eager tasks (no broker) verify at the commit, before the answer is written: it said
    ``pending`` for a record already verified."""
    first, second = factories.matches(tournament)[:2]
    client = client_for(organizer, token=True)
    one = client.post(
        reverse("match-records", kwargs={"match_id": first.pk}),
        data=json.dumps(factories.record(tournament, seed=1)),
        content_type="application/json",
    )
    assert one.status_code == 202
    assert one.json()["state"] == "verified"
    assert one.json()["is_standing"]
    batch = post(client, [named(second, factories.record(tournament, seed=2))])
    (item,) = batch.json()["results"]
    assert item["status"] == 202
    assert item["submission"]["state"] == "verified"


# --- what a client can send in one record of a batch, and a backlog -----------------------------


def with_seat(tournament, seed, name):
    record = factories.record(tournament, seed=seed)
    record["seats"] = [name, *record["seats"][1:]]
    return record


@pytest.mark.parametrize(
    "seat, code",
    [("Mario\u0000Rossi", "nul_character"), ("Mario\ud800", "invalid_text")],
    ids=["nul", "lone-surrogate"],
)
def test_a_seat_name_the_database_cannot_take_refuses_that_record_alone(
    tournament, organizer, seat, code
):
    """The seat names of a batch are looked up in one query; a NUL or a lone surrogate in one of
    them made that query fail, a 500 for the whole batch (the one-record endpoint refuses it
    with 400 before any query)."""
    good_match, bad_match = factories.matches(tournament)[:2]
    body = [
        named(good_match, factories.record(tournament, seed=1)),
        named(bad_match, with_seat(tournament, 2, seat)),
    ]
    response = post(client_for(organizer, token=True), body)
    assert response.status_code == 207, response.content
    results = response.json()["results"]
    assert [item["status"] for item in results] == [202, 400]
    assert results[1]["error"]["code"] == code
    assert list(Submission.objects.values_list("match", flat=True)) == [good_match.pk]


def test_each_record_of_a_batch_keeps_the_one_record_size_limit(tournament, organizer, monkeypatch):
    """A batch may be 2 MiB; one record of it may not be more than the one-record endpoint
    takes (1 MiB): 413 for that record, the others stored."""
    small_match, big_match = factories.matches(tournament)[:2]
    small = factories.record(tournament, seed=1)
    big = factories.record(tournament, seed=2)
    big["deals"] = big["deals"] * 3  # a longer (illegal) record: refused by size before all
    limit = len(json.dumps(small, ensure_ascii=False).encode()) + 100
    assert len(json.dumps(big, ensure_ascii=False).encode()) > limit
    monkeypatch.setattr(services, "MAX_RECORD_BYTES", limit)  # what the view passes on
    response = post(
        client_for(organizer, token=True), [named(small_match, small), named(big_match, big)]
    )
    assert response.status_code == 207, response.content
    results = response.json()["results"]
    assert [item["status"] for item in results] == [202, 413]
    assert results[1]["error"]["code"] == "too_large"
    assert list(Submission.objects.values_list("match", flat=True)) == [small_match.pk]


def pending(tournament, n):
    """``n`` stored records, not verified (the commit's enqueueing does not run in the test's
    transaction)."""
    matches = factories.matches(tournament)[:n]
    outcomes = services.submit_records(
        [(match, factories.record(tournament, seed=i)) for i, match in enumerate(matches)]
    )
    return [outcome.submission.pk for outcome in outcomes]


def test_a_message_of_records_leads_batches_within_its_budget_and_sends_the_rest_again(
    tournament, monkeypatch
):
    """Each batch a lead takes is the oldest records waiting: with a backlog, a message leading
    batch after batch until all of its own were done ran into the soft time limit (a record
    under way then ended in error). Past its budget it sends what is left as a new message."""
    ids = pending(tournament, 3)
    monkeypatch.setattr(tasks, "BATCHES_BUDGET_S", 0.01, raising=False)
    verify = tasks._verify
    led, sent = [], []

    def slow_verify(task, submission_id):
        led.append(submission_id)
        time.sleep(0.02)
        return verify(task, submission_id)

    monkeypatch.setattr(tasks, "_verify", slow_verify)
    monkeypatch.setattr(
        tasks.verify_submissions, "apply_async", lambda args, **kw: sent.append(list(args[0]))
    )
    tasks.verify_submissions.apply(args=(ids,))
    assert led == ids[:1]
    assert sent == [ids[1:]]
    states = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "state"))
    assert states == {ids[0]: "verified", ids[1]: "pending", ids[2]: "pending"}


def test_a_message_within_its_budget_verifies_all_of_its_records(tournament, monkeypatch):
    ids = pending(tournament, 3)
    sent = []
    monkeypatch.setattr(
        tasks.verify_submissions, "apply_async", lambda args, **kw: sent.append(list(args[0]))
    )
    tasks.verify_submissions.apply(args=(ids,))
    assert sent == []
    assert set(Submission.objects.filter(pk__in=ids).values_list("state", flat=True)) == {
        "verified"
    }


@pytest.mark.parametrize(
    "value",
    [
        *(True, False, None, 1.0, -1, 0, 2**63, 10**30, str(2**63)),
        *("007", "0", " 1", "1e3", "١", [1], {"id": 1}),
    ],
    ids=repr,
)
def test_a_match_named_oddly_is_400_no_match(tournament, organizer, value):
    """Never a 500, and never a record refused for naming another match than the one it was
    taken for ("007" was read as match 7, then refused: "names match 007, submitted to 7")."""
    match = factories.matches(tournament)[0]
    if value == "007":
        value = f"00{match.pk}"
    body = [{**factories.record(tournament, seed=1), "match": value}]
    response = post(client_for(organizer, token=True), body)
    assert response.status_code == 207, response.content
    (item,) = response.json()["results"]
    assert item["status"] == 400 and item["error"]["code"] == "no_match", item
    assert not Submission.objects.exists()


def test_a_match_named_by_its_id_as_text_is_taken(tournament, organizer):
    match = factories.matches(tournament)[0]
    body = [{**factories.record(tournament, seed=1), "match": str(match.pk)}]
    (item,) = post(client_for(organizer, token=True), body).json()["results"]
    assert item["status"] == 202
    assert Submission.objects.get().match == match


@pytest.mark.parametrize("as_text", [False, True], ids=["number", "text"])
def test_a_match_whose_id_is_past_32_bits_is_taken(tournament, organizer, as_text):
    """Match ids are bigints; a batch naming one from 2**31 on was refused as naming no match."""
    match = factories.matches(tournament)[0]
    big = 2**31 + match.pk
    Match.objects.filter(pk=match.pk).update(id=big)  # nothing refers to a match not yet played
    body = [{**factories.record(tournament, seed=1), "match": str(big) if as_text else big}]
    (item,) = post(client_for(organizer, token=True), body).json()["results"]
    assert item["status"] == 202, item
    assert Submission.objects.get().match_id == big


def test_a_number_too_large_for_json_is_refused_not_a_500(tournament, organizer):
    """``1e400`` is valid JSON that Python reads as infinity; the record's clock takes any
    non-negative number, and the insert then wrote ``Infinity``, which JSONB refuses: a 500
    (for a batch, the whole batch). Refused with 400 like the other text that cannot be
    stored, on both endpoints."""
    first, second = factories.matches(tournament)[:2]
    record = factories.record(tournament, seed=2)
    text = json.dumps({**record, "clock": {"move_s": 12345.5}}).replace("12345.5", "1e400")
    client = client_for(organizer, token=True)
    one = client.post(
        f"/api/v1/matches/{first.pk}/records/", data=text, content_type="application/json"
    )
    assert one.status_code == 400, one.content
    assert one.json()["error"]["code"] == "number_out_of_range"
    good = json.dumps(named(second, factories.record(tournament, seed=1)))
    batch_text = f'[{good}, {text[:-1]}, "match": {first.pk}}}]'
    response = client.post(URL, data=batch_text, content_type="application/json")
    assert response.status_code == 207, response.content
    results = response.json()["results"]
    assert [item["status"] for item in results] == [202, 400]
    assert results[1]["error"]["code"] == "number_out_of_range"
    assert list(Submission.objects.values_list("match", flat=True)) == [second.pk]


def test_the_per_match_size_cap_counts_the_records_of_the_batch_itself(
    tournament, organizer, monkeypatch
):
    """Two records of one match fit the cap together, the third does not: 413 for it alone,
    and the record of another match after it is stored."""
    match, other = factories.matches(tournament)[:2]
    records = [factories.record(tournament, seed=s) for s in (1, 2, 3, 4)]
    sizes = [len(json.dumps(r, ensure_ascii=False).encode()) for r in records]
    three = sizes[0] + sizes[1] + sizes[2]
    monkeypatch.setattr(services.submitting, "MAX_BYTES_PER_MATCH", three - 1)
    body = [named(match, r) for r in records[:3]] + [named(other, records[3])]
    results = post(client_for(organizer, token=True), body).json()["results"]
    assert [item["status"] for item in results] == [202, 202, 413, 202]
    assert results[2]["error"]["code"] == "match_records_too_large"
    assert Submission.objects.filter(match=match).count() == 2
    assert Submission.objects.filter(match=other).count() == 1
