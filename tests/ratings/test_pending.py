"""Ratings derived from the database: what is still to rate is read from the tables, never
from messages; a correction re-rates only the games it changes."""

from datetime import date

import pytest
from django.db import connection

from ratings.models import RatedMatch, Rating, RatingChange
from ratings.services.ratings import pending_match_ids, rate_pending, recompute
from tests.ratings.test_service import snapshot


@pytest.mark.django_db
def test_results_nobody_announced_are_found_and_rated_once(league):
    """No signal, no task message (the broker lost them): the sweep's one call rates them."""
    ids = {m.id for m in league["matches"]}
    assert set(pending_match_ids()) == ids
    run = rate_pending()
    assert run and run.games == len(ids)
    assert pending_match_ids() == []
    assert rate_pending() is None  # a second sweep changes nothing: rated exactly once
    assert RatedMatch.objects.count() == len(ids)
    swept = snapshot()
    recompute()
    assert snapshot() == swept


@pytest.mark.django_db
def test_a_correction_without_a_message_is_found_by_its_stamp(league, world):
    rate_pending()
    first = league["matches"][0]
    world.result(first, 4, 11)  # corrected; nobody enqueued anything
    assert pending_match_ids() == [first.id]
    rate_pending()
    assert RatingChange.objects.get(match=first, player=league["players"][1]).result == "win"
    corrected = snapshot()
    recompute()
    assert snapshot() == corrected


@pytest.mark.django_db
def test_a_deleted_result_and_a_touched_match_are_pending(league, world):
    rate_pending()
    first, second = league["matches"][:2]
    first.status = "scheduled"
    first.save()
    second.save()  # updated_at moves, the game is the same
    assert pending_match_ids() == sorted([first.id, second.id])
    before = list(RatingChange.objects.filter(match=second).values_list("id", flat=True))
    assert before
    rate_pending()
    assert pending_match_ids() == []
    assert not RatingChange.objects.filter(match=first).exists()
    # The touched match's game did not change and its players did not meet the first's: its
    # rows are kept as they were.
    assert list(RatingChange.objects.filter(match=second).values_list("id", flat=True)) == before
    after = snapshot()
    recompute()
    assert snapshot() == after


@pytest.mark.django_db
def test_a_first_day_correction_leaves_unrelated_games_alone(world):
    """Two circles of players who never meet: correcting one's first game does not touch the
    other's history (same rows, same ids), and lands on the full replay's numbers."""
    circles = []
    for name in ("north", "south"):
        ps = [world.player() for _ in range(4)]
        ls = [world.line(p) for p in ps]
        t = world.tournament(name, date(2026, 1, 10))
        ms = [
            world.play(t, r, ls[a], ls[b], 11, 5)
            for r, (a, b) in enumerate([(0, 1), (2, 3), (0, 2), (1, 3), (0, 3), (1, 2)], start=1)
        ]
        circles.append(ms)
    later = world.tournament("later", date(2026, 6, 1))
    extra = world.play(later, 1, world.line(world.player()), world.line(world.player()), 11, 3)
    rate_pending()
    south_ids = [m.id for m in circles[1]] + [extra.id]
    untouched = list(
        RatingChange.objects.filter(match__in=south_ids)
        .order_by("id")
        .values_list("id", "mu_after")
    )
    world.result(circles[0][0], 2, 11)
    run = rate_pending()
    assert run.kind == "replay"
    # The north circle's games that involve the corrected game's players, directly or through
    # a later opponent: all but round 2's, which two other players played.
    assert run.games == len(circles[0]) - 1
    assert (
        list(
            RatingChange.objects.filter(match__in=south_ids)
            .order_by("id")
            .values_list("id", "mu_after")
        )
        == untouched
    )
    corrected = snapshot()
    recompute()
    assert snapshot() == corrected


@pytest.mark.django_db
def test_new_results_beyond_the_rated_ones_are_appended_in_one_run(league, world):
    matches = league["matches"]
    rate_pending(match_ids=[m.id for m in matches[:5]])
    rated = RatingChange.objects.count()
    run = rate_pending()
    assert run.kind == "replay" or run.kind == "incremental"
    assert RatingChange.objects.count() > rated
    swept = snapshot()
    recompute()
    assert snapshot() == swept


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="planner statistics of PostgreSQL")
def test_recompute_analyzes_the_tables_it_rewrites(league):
    recompute()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reltuples FROM pg_class WHERE relname IN "
            "('ratings_ratingchange', 'ratings_rating', 'ratings_ratedmatch')"
        )
        tuples = dict(cursor.fetchall())
    # Never analyzed, a table's reltuples is -1 (PostgreSQL 14+) or 0; ANALYZE counts the rows.
    assert tuples["ratings_ratingchange"] == RatingChange.objects.count()
    assert tuples["ratings_rating"] == Rating.objects.count()
    assert tuples["ratings_ratedmatch"] == RatedMatch.objects.count()


def test_results_inside_a_debounce_window_send_one_task():
    """One rating task per window, published with the window as countdown (whole seconds, as
    RabbitMQ's delayed delivery wants), and the mark lasts exactly that long."""
    from unittest import mock

    from django.core.cache import cache

    from ratings import tasks

    cache.delete(tasks.DEBOUNCE_KEY)
    with mock.patch.object(tasks.rate_pending, "apply_async") as send:
        tasks.request_rating()
        tasks.request_rating()
    assert send.call_count == 1
    countdown = send.call_args.kwargs["countdown"]
    assert isinstance(countdown, int) and countdown >= 1
    cache.delete(tasks.DEBOUNCE_KEY)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the replay outside the lock")
def test_a_correction_replays_outside_the_lock_and_catches_up_what_was_appended_meanwhile(
    league, world, monkeypatch
):
    """A first-day correction computes its replay without the writers' lock: another writer
    appends a result of an affected player meanwhile (and is not kept waiting); the correction
    re-rates it on top of its new numbers, before it asks for the lock, and they end as the
    full replay's."""
    import threading

    from ratings.models import RatingRun
    from ratings.services import ratings as service

    rate_pending()
    players, lines = league["players"], league["lines"]
    later = world.tournament("summer", date(2026, 7, 1))
    appended = world.match(later, 1, lines[0], lines[3])  # player 0 meets the corrected game
    world.result(league["matches"][0], 4, 11)
    restore = service._restore
    took = []

    def restore_while_another_writer_appends(subjects, **kwargs):
        if not took:  # inside the replay's transaction, before it asks for the lock
            other = threading.Thread(
                target=lambda: (
                    world.result(appended, 11, 7),  # its own connection: committed at once
                    took.append(rate_pending(match_ids=[appended.id])),
                    connection.close(),
                )
            )
            other.start()
            other.join(20)
        return restore(subjects, **kwargs)

    monkeypatch.setattr(service, "_restore", restore_while_another_writer_appends)
    lock, at_lock = service._lock, []

    def lock_and_look():
        # which runs hold the appended result's changes when the correction asks for the lock
        at_lock.append(set(RatingChange.objects.filter(match=appended).values_list("run__kind")))
        lock()

    monkeypatch.setattr(service, "_lock", lock_and_look)
    run = rate_pending(match_ids=[league["matches"][0].id])
    # caught up before the lock: the writers wait only for what is appended after
    assert at_lock[-1] == {(RatingRun.Kind.REPLAY,)}
    assert took and took[0].kind == RatingRun.Kind.INCREMENTAL  # it did not wait for the lock
    assert run.kind == RatingRun.Kind.REPLAY
    assert RatingChange.objects.get(match=league["matches"][0], player=players[1]).result == "win"
    assert pending_match_ids() == []
    assert RatedMatch.objects.filter(match=appended).count() == 1
    assert RatingChange.objects.filter(match=appended).count() == 2
    corrected = snapshot()
    recompute()
    full = snapshot()
    assert corrected[0] == full[0]
    assert corrected[1] == full[1]
