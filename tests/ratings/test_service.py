"""The ORM layer: incremental updates equal a full replay; corrections and late results replay."""

import pytest
from django.core.management import call_command

from ratings.models import RatedMatch, Rating, RatingChange, RatingRun
from ratings.services.ratings import recompute, update_for_match
from tournaments.models import Outcome


def snapshot():
    ratings = sorted(
        (
            r.pool,
            r.player_id,
            r.partner_id,
            r.mu,
            r.sigma,
            r.games,
            r.wins,
            r.draws,
            r.losses,
            r.last_played,
        )
        for r in Rating.objects.all()
    )
    # Key order, not id order: a correction re-rates only the games it changes, so ids are in
    # key order per subject (what a replay restarts from), not across subjects.
    history = list(
        RatingChange.objects.order_by(
            "played_on",
            "tournament_id_key",
            "stage_order",
            "round_number",
            "match_id",
            "pool",
            "player_id",
            "partner_id",
        ).values_list("match_id", "pool", "player_id", "partner_id", "mu_after", "sigma_after")
    )
    return ratings, history


def rating(player, pool="singles"):
    return Rating.objects.get(pool=pool, player=player, partner__isnull=True)


@pytest.mark.django_db
def test_incremental_in_order_equals_full_recompute(league, world):
    ordered = sorted(league["matches"], key=lambda m: (m.round.stage.tournament.start_date, m.id))
    for m in ordered:
        update_for_match(m.id)
    incremental = snapshot()
    assert RatingRun.objects.filter(kind="incremental").count() == len(ordered)
    call_command("recompute_ratings", verbosity=0)
    assert snapshot() == incremental
    run = RatingRun.objects.filter(kind="full").get()
    assert run.model == "PlackettLuce" and run.openskill_version and run.games == len(ordered)
    assert run.params["beta"] == pytest.approx(25 / 6)


@pytest.mark.django_db
def test_results_out_of_order_replay_to_the_same_numbers(league):
    for m in reversed(league["matches"]):
        update_for_match(m.id)
    shuffled = snapshot()
    assert RatingRun.objects.filter(kind="replay").exists()
    recompute()
    assert snapshot() == shuffled


@pytest.mark.django_db
def test_order_within_a_round_does_not_matter(world):
    """Arrival order inside a round is irrelevant: a round is applied in match-id order."""
    ps = [world.player() for _ in range(4)]
    ls = [world.line(p) for p in ps]
    t = world.tournament("r")
    a = world.play(t, 1, ls[0], ls[1], 11, 2)
    b = world.play(t, 1, ls[1], ls[2], 11, 7)  # same round, shares a player
    c = world.play(t, 1, ls[0], ls[3], 3, 11)
    for m in (c, a, b):
        update_for_match(m.id)
    arrived_late_first = snapshot()[0]
    recompute()
    assert snapshot()[0] == arrived_late_first


@pytest.mark.django_db
def test_moves_draws_timeouts_and_unrated_outcomes(league, world):
    recompute()
    ps = league["players"]
    assert rating(ps[0]).mu > 25 and rating(ps[1]).games == 2
    assert rating(ps[4]).draws == 1 and rating(ps[5]).draws == 1
    # The timeout: player 3 scored more but offended, so it is a loss for 3 and a win for 0.
    ch = RatingChange.objects.get(match=league["matches"][7], pool="singles", player=ps[3])
    assert ch.result == "loss" and ch.mu_after < ch.mu_before
    assert RatingChange.objects.get(match=league["matches"][7], player=ps[0]).result == "win"
    # Pairs pool: players and the fixed pair, no singles rows for the pairs tournament.
    assert rating(ps[0], "pairs").mu > 25 > rating(ps[2], "pairs").mu
    unit = Rating.objects.get(pool="pair_units", player=ps[0], partner=ps[1])
    assert unit.games == 1 and unit.wins == 1
    # Forfeits and byes are not rated.
    t = league["t"][1]
    f = world.play(
        t,
        3,
        league["lines"][0],
        league["lines"][1],
        0,
        0,
        outcome=Outcome.FORFEIT,
        offender=league["lines"][1],
    )
    bye = world.match(t, 4, league["lines"][2], None)
    bye.status, bye.outcome, bye.winner = "done", Outcome.BYE, league["lines"][2]
    bye.save()
    before = snapshot()
    update_for_match(f.id)
    update_for_match(bye.id)
    assert snapshot() == before
    assert not RatedMatch.objects.filter(match__in=[f, bye]).exists()


@pytest.mark.django_db
def test_a_corrected_result_replays_from_that_match(league, world):
    for m in league["matches"]:
        update_for_match(m.id)
    first = league["matches"][0]
    world.result(first, 4, 11)  # the winner was wrong: corrected
    update_for_match(first.id)
    corrected = snapshot()
    assert RatingChange.objects.get(match=first, player=league["players"][1]).result == "win"
    recompute()
    assert snapshot() == corrected
    # Deleting the result (match back to scheduled) removes it from the ratings.
    first.status = "scheduled"
    first.save()
    update_for_match(first.id)
    assert not RatingChange.objects.filter(match=first).exists()
    after_delete = snapshot()
    recompute()
    assert snapshot() == after_delete


@pytest.mark.django_db
def test_recompute_from_a_date_equals_full(league):
    recompute()
    full = snapshot()
    call_command("recompute_ratings", "--from", "2026-03-01", verbosity=0)
    assert snapshot()[0] == full[0]
    assert RatingRun.objects.filter(kind="replay").exists()


def test_signal_enqueues_the_rating_update(world, eager_celery):
    from tournaments.signals import results_changed

    a, b = world.player(), world.player()
    t = world.tournament("sig")
    m = world.play(t, 1, world.line(a), world.line(b), 11, 0)
    results_changed.send(sender=type(m), matches=[m])
    assert rating(a).wins == 1


def test_results_entered_and_corrected_through_the_services(
    world, eager_celery, django_capture_on_commit_callbacks
):
    """enter_result → results_changed on commit → Celery task → ratings; a correction
    replays and lands on the same numbers as a full recompute."""
    from tournaments.services.results import enter_result

    a, b, c = world.player(), world.player(), world.player()
    la, lb, lc = world.line(a), world.line(b), world.line(c)
    t = world.tournament("svc")
    m1 = world.match(t, 1, la, lb)
    m2 = world.match(t, 2, lb, lc)

    def deal(home, away):
        return [{"points": [home, away], "breakdown": [{"scope": home}, {"scope": away}]}]

    with django_capture_on_commit_callbacks(execute=True):
        enter_result(m2, deal(11, 3))
    with django_capture_on_commit_callbacks(execute=True):
        enter_result(m1, deal(11, 5))  # earlier round, arrives late: replay
    assert rating(a).wins == 1 and rating(b).games == 2
    with django_capture_on_commit_callbacks(execute=True):
        enter_result(m1, deal(2, 11))  # corrected
    assert rating(a).losses == 1 and rating(b).wins == 2
    corrected = snapshot()
    recompute()
    assert snapshot() == corrected


def test_deleting_a_rated_tournament_replays_the_rest(
    league, eager_celery, django_capture_on_commit_callbacks
):
    recompute()
    t1 = league["t"][0]
    with django_capture_on_commit_callbacks(execute=True):
        t1.delete()
    after_delete = snapshot()
    assert not RatingChange.objects.filter(tournament_id_key=t1.pk).exists()
    recompute()
    assert snapshot() == after_delete
    # Player 5 only played singles in the deleted tournament: no singles rating is left.
    assert not Rating.objects.filter(pool="singles", player=league["players"][5]).exists()


@pytest.mark.django_db
def test_the_recompute_command_shows_its_progress_step_by_step(league, world):
    """A full recompute of a large log runs for seconds: the command shows a bar for reading,
    rating (game by game) and writing, on stderr, and its one-line report on stdout."""
    import io

    games = len(league["matches"])  # played with their results
    out, err = io.StringIO(), io.StringIO()
    call_command("recompute_ratings", stdout=out, stderr=err)
    bars = err.getvalue()
    assert "reading" in bars and "writing" in bars
    assert f"{games}/{games}" in bars  # every game rated, counted
    assert out.getvalue().count("\n") == 1 and "games in" in out.getvalue()
    silent = io.StringIO()
    call_command("recompute_ratings", "--no-progress", stdout=io.StringIO(), stderr=silent)
    assert silent.getvalue() == ""
