"""Migration ``games/0004`` on records stored with the envelope's ``match`` field, on either
database: such a record was hashed with it. The field goes (the engine reads the stored text as
it is, and refuses it), and the record is hashed again, so the same record sent again is known
as a duplicate, not kept as a second submission."""

import importlib
import json
from types import SimpleNamespace
from unittest import mock

import pytest
from django.db import connection

from games import services
from games.models import Submission, content_hash
from tests.api import factories

migration = importlib.import_module("games.migrations.0004_records_stored_as_json_text")


def stored_as_before_batches(match, seed) -> tuple[int, dict]:
    """A submission as it was stored before the field was taken out on submission: the record
    with the ``match`` field beside its own fields, hashed with it. Its id and the record
    without the field."""
    record = factories.record(match.round.stage.tournament, seed=seed)
    with mock.patch.object(services.enqueueing, "enqueue_verification"):
        pk = services.submit_record(match, record).submission.pk
    old = {"match": match.pk, **record}
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE games_submission SET document = %s, content_hash = %s WHERE id = %s",
            [json.dumps(old), content_hash(old), pk],
        )
    return pk, record


def migrate():
    """The migration's data step on the test's connection (SQLite's schema editor cannot open
    inside the test's transaction, and the step only needs its connection)."""
    migration.drop_match_field(None, SimpleNamespace(connection=connection))


@pytest.mark.django_db
def test_a_record_stored_with_a_match_field_loses_it_and_is_known_when_sent_again():
    tournament = factories.tournament(lines=3)
    match = factories.matches(tournament)[0]
    pk, record = stored_as_before_batches(match, seed=810)
    migrate()
    kept = Submission.objects.get(pk=pk)
    assert kept.document == record
    assert kept.content_hash == content_hash(record)
    with mock.patch.object(services.enqueueing, "enqueue_verification"):
        again = services.submit_record(match, {"match": match.pk, **record})
    assert not again.created
    assert again.submission.pk == pk
    assert Submission.objects.filter(match=match).count() == 1


@pytest.mark.django_db
def test_a_record_already_sent_again_keeps_its_old_hash_and_the_migration_goes_through():
    """Sent again since, the record was stored a second time, hashed without the field: the
    match may hold one submission per hash, so the old one keeps its own."""
    tournament = factories.tournament(lines=3)
    match = factories.matches(tournament)[0]
    pk, record = stored_as_before_batches(match, seed=811)
    with mock.patch.object(services.enqueueing, "enqueue_verification"):
        later = services.submit_record(match, record)
    assert later.created  # what the old hash cost before the migration
    migrate()
    old = Submission.objects.get(pk=pk)
    assert old.document == record
    assert old.content_hash == content_hash({"match": match.pk, **record})
    assert Submission.objects.get(pk=later.submission.pk).content_hash == content_hash(record)


@pytest.mark.django_db
def test_records_stored_without_a_match_field_are_left_as_they_are():
    tournament = factories.tournament(lines=3)
    match, other = factories.matches(tournament)[:2]
    stored_as_before_batches(match, seed=812)  # the one the migration changes
    with mock.patch.object(services.enqueueing, "enqueue_verification"):
        untouched = services.submit_record(other, factories.record(tournament, seed=813))
    before = Submission.objects.values_list("document", "content_hash").get(
        pk=untouched.submission.pk
    )
    migrate()
    after = Submission.objects.values_list("document", "content_hash").get(
        pk=untouched.submission.pk
    )
    assert after == before


@pytest.mark.django_db
def test_a_record_that_is_not_an_object_is_left_as_it_is():
    """PostgreSQL's ``?`` also finds ``"match"`` among an array's strings; no such record can
    be stored now, but one stored by hand must not stop the migration."""
    tournament = factories.tournament(lines=3)
    match = factories.matches(tournament)[0]
    pk, _record = stored_as_before_batches(match, seed=814)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE games_submission SET document = %s WHERE id = %s", ['["match", 1]', pk]
        )
    before = Submission.objects.values_list("document", "content_hash").get(pk=pk)
    migrate()
    assert Submission.objects.values_list("document", "content_hash").get(pk=pk) == before
