"""A batch of verified records is written by the same result writer as a single record, with its
rows gathered and written per table (``results.ResultBatch``): what ends in the database must be
exactly what verifying the records one by one gives, and the batch must announce once."""

import time
from unittest import mock

import pytest
from django.db import connection, transaction
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext
from django.utils.translation import gettext

from games import services
from games.models import Submission
from live.groups import LiveEvent
from tests.api import factories
from tests.pages.factories import winning_deals
from tournaments.models import ChangeLog, Match, MatchResult, ResultVersion, Stage
from tournaments.services import results, schedule
from tournaments.services.results import deals_of_match
from tournaments.signals import results_changed

pytestmark = pytest.mark.skipif(
    not services.batching_available(), reason="batches need PostgreSQL's advisory locks"
)


def submit(match, seed, *, declared=True):
    """A record waiting for verification (nothing enqueued); without ``declared`` totals it is
    another record of the same result."""
    document = factories.record(match.round.stage.tournament, seed=seed)
    if not declared:
        for deal in document["deals"]:
            deal.pop("declared", None)
    with mock.patch.object(services.enqueueing, "enqueue_verification"):
        return services.submit_record(match, document).submission.pk


def scenario(tournament):
    """Records waiting, in submission order: most matches fresh, one match whose desk result
    differs (the record waits for a decision), one match with two records of different results
    (the second waits), so the writer meets precedence and a match written twice."""
    matches = factories.matches(tournament)
    results.save_result(matches[1], winning_deals(0, 1))  # the desk's result
    ids = [submit(match, seed=500 + index) for index, match in enumerate(matches)]
    ids.append(submit(matches[4], seed=504, declared=False))  # the same result again
    ids.append(submit(matches[4], seed=999))  # another result
    return ids


def snapshot(tournament):
    """The tournament's results as plain data, with ids replaced by positions."""
    matches = factories.matches(tournament)
    lines = {}
    for match in matches:
        lines.setdefault(match.home_id, len(lines))
        lines.setdefault(match.away_id, len(lines))
    line = lines.get

    def detail(entry):
        plain = {k: v for k, v in entry.detail.items() if k not in ("record", "winner")}
        if plain.get("replaced"):
            plain["replaced"] = {**plain["replaced"], "winner": line(plain["replaced"]["winner"])}
        return plain

    state = []
    for match in matches:
        versions = ResultVersion.objects.filter(match=match).order_by("number")
        logs = ChangeLog.objects.filter(match=match).order_by("pk")
        state.append(
            {
                "match": (match.status, match.outcome, line(match.winner_id)),
                "scores": sorted(
                    (line(r.line_id), r.points, r.mp, r.vp, r.won, r.drawn)
                    for r in MatchResult.objects.filter(match=match)
                ),
                "has_tiebreak": match.has_tiebreak,
                "deals": [
                    (d.number, d.points, d.breakdown, d.is_tiebreak, d.is_penalty)
                    for d in deals_of_match(match)
                ],
                "versions": [
                    (v.number, v.source, v.status, v.based_on_id is not None, v.sheet)
                    for v in versions
                ],
                "log": [(entry.action, detail(entry)) for entry in logs],
            }
        )
    return state


@pytest.mark.django_db
def test_a_batch_writes_what_one_record_at_a_time_writes(
    django_capture_on_commit_callbacks, monkeypatch
):
    # one group, whatever the machine's speed
    monkeypatch.setattr(services.batches, "GROUP_WAIT_S", 60)
    alone, together = factories.tournament(lines=5), factories.tournament(lines=5)
    one_by_one = scenario(alone)
    for pk in one_by_one:
        services.run_verification(pk)
    batched = scenario(together)
    before = {m.pk: m.updated_at for m in factories.matches(together)}
    heard = []

    def listener(sender, matches, **kwargs):
        heard.append(sorted(m.pk for m in matches))

    results_changed.connect(listener)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert services.verify_waiting(batched[0], bound=len(batched)) == "verified"
    finally:
        results_changed.disconnect(listener)

    assert snapshot(together) == snapshot(alone)
    states = list(Submission.objects.filter(pk__in=batched).order_by("pk").values_list("state"))
    assert states == list(
        Submission.objects.filter(pk__in=one_by_one).order_by("pk").values_list("state")
    )
    waiting = ResultVersion.objects.filter(
        match__round__stage__tournament=together, status=ResultVersion.Status.AWAITING
    )
    assert waiting.count() == 2  # the record against the desk, the second record of a match
    # one announcement for the batch's results (one per group of the batch), every match in it
    announced = {pk for batch in heard for pk in batch}
    in_force = set(
        ResultVersion.objects.filter(
            submission__in=batched, status=ResultVersion.Status.IN_FORCE
        ).values_list("match_id", flat=True)
    )
    assert announced == in_force
    # every match whose result the batch brought into force moved its stamp (the public
    # pages' cache key)
    for match in Match.objects.filter(pk__in=in_force):
        assert match.updated_at > before[match.pk]
    assert len(heard) <= -(-len(batched) // services.GROUP_SIZE)


@pytest.mark.django_db
def test_a_batch_writes_each_table_once_not_once_per_record(
    django_assert_max_num_queries, monkeypatch
):
    # one group, whatever the machine's speed (on a loaded machine the engine took longer than
    # GROUP_WAIT_S for the batch, which then wrote in two groups)
    monkeypatch.setattr(services.batches, "GROUP_WAIT_S", 60)
    tournament = factories.tournament(lines=7)  # 21 matches
    ids = [submit(match, seed=700 + i) for i, match in enumerate(factories.matches(tournament))]
    # one record at a time took about 20 queries per record; a batch of fresh results a fixed
    # number per group (no savepoint, no row of its own before the flush)
    with django_assert_max_num_queries(40) as queries:
        services.verify_waiting(ids[0], bound=len(ids))
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == len(ids)
    # no row goes in as Django's one array per column, which psycopg escapes in Python (a sixth
    # of a batch's CPU for the versions' sheets): the rows go in by COPY (rows.create_many)
    assert [q["sql"][:60] for q in queries if "UNNEST" in q["sql"]] == []
    assert [q["sql"].split("(")[0] for q in queries if q["sql"].startswith("COPY")] == [
        f"COPY {table} "
        for table in (
            '"tournaments_resultversion"',
            '"tournaments_matchresult"',
            '"tournaments_changelog"',
        )
    ]
    assert MatchResult.objects.filter(match__round__stage__tournament=tournament).count() == 42


class _Clocks:
    """``time`` for ``games.services.batches``: each reading of ``jumping`` a second later."""

    def __init__(self, jumping):
        self._seconds = 0.0
        self.monotonic, self.process_time = time.monotonic, time.process_time
        setattr(self, jumping, self._jump)

    def _jump(self):
        self._seconds += 1.0
        return self._seconds


@pytest.mark.django_db
@pytest.mark.parametrize(("jumping", "groups"), [("monotonic", 1), ("process_time", 4)])
def test_a_batch_is_split_by_the_engine_s_cpu_not_by_the_wall_clock(monkeypatch, jumping, groups):
    # A loaded machine stretched the wall clock: batches split into groups of a record or two,
    # each paying the group's dozen queries and its announcement. A record that costs the
    # engine CPU still has its group written without waiting for the next one.
    tournament = factories.tournament(lines=4)  # 6 matches
    matches = factories.matches(tournament)[:4]
    ids = [submit(match, seed=800 + i) for i, match in enumerate(matches)]
    monkeypatch.setattr(services.batches, "time", _Clocks(jumping))
    with mock.patch.object(
        services.batches, "_write_group", wraps=services.batches._write_group
    ) as write:
        services.verify_waiting(ids[0], bound=len(ids))
    assert write.call_count == groups
    assert set(Submission.objects.filter(pk__in=ids).values_list("state", flat=True)) == {
        "verified"
    }


@pytest.mark.django_db
def test_a_batch_reads_each_record_as_the_text_stored():
    """Records are kept as ``json`` text (``games.models.RecordField``): the batch reads the
    column as it is. Kept as ``jsonb``, PostgreSQL rebuilt the text of every record on each
    read, two fifths of the engine's time; and a ``match`` field was looked up in each."""
    tournament = factories.tournament(lines=3)
    matches = factories.matches(tournament)
    ids = [submit(match, seed=800 + i) for i, match in enumerate(matches)]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT DISTINCT pg_typeof(document)::text FROM games_submission "
                "WHERE id = ANY(%s)",
                [ids],
            )
            assert cursor.fetchall() == [("json",)]
    with CaptureQueriesContext(connection) as queries:
        services.verify_waiting(ids[0], bound=len(ids))
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == len(ids)
    (read,) = [q["sql"] for q in queries if '"document"' in q["sql"]]
    assert "CASE" not in read and '"document" -' not in read


@pytest.mark.django_db
def test_a_record_leaves_its_row_when_stored_not_when_verified():
    """As ``json`` text a record compresses to about 1.7 KiB, under the 2 KiB from which
    PostgreSQL moves values out of a row: the verification's update then copied the text into
    a new row version and moved it out there. The table toasts rows from 1 KiB."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'games_submission'")
        (options,) = cursor.fetchone()
    assert "toast_tuple_target=1024" in (options or [])


@pytest.mark.django_db
def test_a_fresh_result_in_a_batch_writes_only_at_the_flush():
    """What lets a batch write a fresh result without a savepoint (``ResultBatch.writes_now``):
    its rows are only gathered, so a failure is undone by ``undo`` alone."""
    tournament = factories.tournament(lines=3)
    match = factories.matches(tournament)[0]
    verdict = services.compute_verdict(factories.record(tournament, seed=1))
    with transaction.atomic(), results.written_together() as batch:
        held = results.lock_matches([match.pk])
        batch.preload(held.values())
        assert not batch.writes_now(held[match.pk])
        mark = batch.mark()
        with CaptureQueriesContext(connection) as queries:
            results.apply_verified_result(held[match.pk], verdict, locked=True)
        assert [q["sql"] for q in queries if not q["sql"].startswith("SELECT")] == []
        batch.undo(mark, held[match.pk])  # as if it had failed: its gathered rows go
    assert not ResultVersion.objects.filter(match=match).exists()
    assert not MatchResult.objects.filter(match=match).exists()
    assert not ChangeLog.objects.filter(match=match).exists()


@pytest.mark.django_db
def test_a_record_undone_after_a_flush_reads_the_match_s_versions_again():
    """``lock_matches`` reads the last version number along with the match; once the batch has
    flushed a version of it, a record undone must not bring that stale number back."""
    tournament = factories.tournament(lines=3)
    match = factories.matches(tournament)[0]
    first, second = (
        services.compute_verdict(factories.record(tournament, seed=seed)) for seed in (1, 2)
    )
    with transaction.atomic(), results.written_together() as batch:
        held = results.lock_matches([match.pk])
        batch.preload(held.values())
        results.apply_verified_result(held[match.pk], first, locked=True)
        batch.flush()
        batch.undo(batch.mark(), held[match.pk])  # a later record of the match, refused
        results.apply_verified_result(held[match.pk], second, locked=True)
    numbers = ResultVersion.objects.filter(match=match).values_list("number", flat=True)
    assert sorted(numbers) == [1, 2]


@pytest.mark.django_db
def test_knockout_records_in_one_batch_move_their_lines_as_alone(
    django_capture_on_commit_callbacks,
):
    def bracket():
        tournament = factories.tournament(lines=4, knockout=True)
        stage = tournament.stages.get()
        Match.objects.filter(round__stage=stage).delete()
        stage.rounds.all().delete()
        schedule.generate_knockout(stage, schedule.seeded_lines(tournament))
        semis = list(
            Match.objects.filter(round__stage=stage, home__isnull=False, away__isnull=False)
        )
        return tournament, semis

    def final_of(semis):
        final = Match.objects.get(pk=semis[0].next_match_id)
        return final.home_id, final.away_id

    alone, alone_semis = bracket()
    for index, semi in enumerate(alone_semis):
        services.run_verification(submit(semi, seed=40 + index))
    together, semis = bracket()
    ids = [submit(semi, seed=40 + index) for index, semi in enumerate(semis)]
    with django_capture_on_commit_callbacks(execute=True):
        services.verify_waiting(ids[0], bound=len(ids))
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == 2
    assert None not in final_of(semis)
    winners = {Match.objects.get(pk=s.pk).winner_id for s in semis}
    assert set(final_of(semis)) == winners
    assert snapshot(together)[:2] == snapshot(alone)[:2]


@pytest.mark.django_db
def test_a_record_after_one_that_waits_for_a_decision_on_the_same_match_is_written():
    """A group whose only rows so far are a version waiting for a decision (nothing projected
    yet) must still be flushed before the same match is written again: a second record of the
    result in force comes into force beside it instead of failing."""
    tournament = factories.tournament(lines=3)
    match = factories.matches(tournament)[0]
    services.run_verification(submit(match, seed=11))  # v1 in force
    other = submit(match, seed=999)  # another result: waits for a decision
    same = submit(match, seed=11, declared=False)  # the result in force again
    assert services.verify_waiting(other, bound=2) == "verified"
    assert Submission.objects.get(pk=same).state == "verified"
    versions = ResultVersion.objects.filter(match=match).order_by("number")
    assert [(v.number, v.submission_id, v.status) for v in versions][1:] == [
        (2, other, "awaiting"),
        (3, same, "in_force"),
    ]


@pytest.mark.django_db
def test_a_record_the_writer_refuses_without_a_savepoint_fails_alone():
    """A fresh result is written without a savepoint of its own (``ResultBatch.writes_now``):
    the writer refusing it (here a knock-out final that lost a line to a corrected semi-final
    while its record waited) must end that record in ``error`` and leave the group's
    transaction usable for the others."""
    cup = factories.tournament(lines=4, knockout=True)
    stage = cup.stages.get()
    Match.objects.filter(round__stage=stage).delete()
    stage.rounds.all().delete()
    schedule.generate_knockout(stage, schedule.seeded_lines(cup))
    semis = list(Match.objects.filter(round__stage=stage, home__isnull=False, away__isnull=False))
    for semi in semis:
        results.save_result(semi, winning_deals(0, 1))
    final = Match.objects.get(pk=semis[0].next_match_id)
    assert final.next_match_id is None and final.loser_next_match_id is None
    in_the_final = submit(final, seed=1)
    results.delete_result(semis[0])  # the final loses a line
    league = factories.tournament(lines=3)
    elsewhere = submit(factories.matches(league)[0], seed=2)

    assert services.verify_waiting(in_the_final, bound=2) == "error"
    refused = Submission.objects.get(pk=in_the_final)
    assert (refused.state, refused.error_reason) == (
        "error",
        gettext("This match does not have both lines yet."),
    )
    assert Submission.objects.get(pk=elsewhere).state == "verified"
    assert not ResultVersion.objects.filter(submission=in_the_final).exists()
    assert ResultVersion.objects.filter(submission=elsewhere, status="in_force").exists()


@pytest.mark.django_db
def test_results_changed_leaves_out_a_match_whose_stage_went_between_its_two_reads():
    """``send_results_changed`` reads the matches, then their stages (after the commit, no lock
    held): a stage deleted in between takes its matches out of the announcement, not the rest."""
    kept, gone = factories.tournament(lines=4), factories.tournament(lines=4)
    # more matches than are read with their stages joined in (6 each)
    announced = [m.pk for m in factories.matches(kept) + factories.matches(gone)]
    assert len(announced) > results.batch.JOINED_STAGES_UP_TO
    gone_stage = gone.stages.get().pk
    real_in_bulk = QuerySet.in_bulk

    def in_bulk_without_the_deleted(queryset, id_list=None, **kwargs):
        found = real_in_bulk(queryset, id_list, **kwargs)
        if queryset.model is Stage:
            found.pop(gone_stage, None)
        return found

    heard = []

    def listener(sender, matches, **kwargs):
        heard.extend(m.pk for m in matches)

    results_changed.connect(listener)
    try:
        with mock.patch.object(QuerySet, "in_bulk", in_bulk_without_the_deleted):
            results.send_results_changed(announced)
    finally:
        results_changed.disconnect(listener)
    assert heard == announced[:6]


@pytest.mark.django_db
def test_a_lone_match_is_locked_and_read_with_its_stage_in_two_queries(
    django_assert_num_queries,
):
    """A lone record's match is read with its stage, tournament and VP table joined in (a query
    less than a batch's many matches, which read each stage once)."""
    tournament = factories.tournament(lines=4)
    matches = factories.matches(tournament)
    with transaction.atomic():
        with django_assert_num_queries(2):
            (held,) = results.lock_matches([matches[0].pk]).values()
            assert held.round.stage.tournament.vp_table.pk == tournament.vp_table_id
        with django_assert_num_queries(3):
            many = results.lock_matches(m.pk for m in matches)
            stages = {id(m.round.stage) for m in many.values()}
    assert len(many) == len(matches) and len(stages) == 1  # one stage object, shared


@pytest.mark.django_db
def test_records_a_batch_refuses_are_announced_to_the_desk_once_per_tournament(
    django_capture_on_commit_callbacks,
):
    """The bulk update of verdicts sends no ``post_save``: without one per tournament the desk's
    live page never heard of a record refused inside a batch, as it does of one verified alone."""
    tournament = factories.tournament(lines=4)
    matches = factories.matches(tournament)
    ids = []
    for index, match in enumerate(matches[:3]):
        document = factories.record(tournament, seed=40 + index)
        if index < 2:  # an illegal play: the engine refuses the record
            play = document["deals"][0]["plays"][0]
            hand_other = document["deals"][0]["deck"][0:3]
            play["card"] = next(
                c
                for c in document["deals"][0]["deck"][:12]
                if c not in hand_other and c != play["card"]
            )
        with mock.patch.object(services.enqueueing, "enqueue_verification"):
            ids.append(services.submit_record(match, document).submission.pk)
    with (
        mock.patch("live.signals.announce") as announce,
        django_capture_on_commit_callbacks(execute=True),
    ):
        services.verify_waiting(ids[0], bound=len(ids))
    states = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "state"))
    assert [states[pk] for pk in ids] == ["rejected", "rejected", "verified"]
    records = [c for c in announce.call_args_list if c.args[1:] == ("record",)]
    assert records == [mock.call(tournament.pk, LiveEvent.RECORD)]
