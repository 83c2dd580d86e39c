"""Stage lifecycle, qualifier drift, withdrawals and the tournament's status."""

import pytest
from django.db.models import Q

from tests.pages.factories import build_tournament, play_stage, winning_deals
from tournaments.exceptions import ResultError
from tournaments.models import ChangeLog, Entry, Match, MatchResult, Outcome, Stage, Tournament
from tournaments.services import lifecycle, results, schedule
from tournaments.services.export import build_document

pytestmark = pytest.mark.django_db


def _stages(tournament):
    return list(tournament.stages.order_by("order"))


def _closed_groups(n_lines=8, groups=2):
    tournament = build_tournament(n_lines, slug="ciclo", groups=groups)
    groups_stage, knockout = _stages(tournament)
    schedule.close_stage(groups_stage, per_group=2)
    return tournament, groups_stage, knockout


def _swap_second_and_third(stage):
    """Corrections that move a group's third line above its second: every match of the third
    becomes an 11–0 win, every match of the second an 11–0 loss."""
    from tournaments.services.standings import stage_standings

    group, rows = stage_standings(stage)[0]
    second, third = rows[1].line, rows[2].line
    for match in Match.objects.filter(group=group).exclude(outcome=Outcome.BYE):
        if third.pk in (match.home_id, match.away_id):
            side = 0 if match.home_id == third.pk else 1
        elif second.pk in (match.home_id, match.away_id):
            side = 1 if match.home_id == second.pk else 0
        else:
            continue
        results.enter_result(match, winning_deals(side, 0))
    return second, third


# --------------------------------------------------------------------------- status


def test_status_follows_the_stages_draft_running_finished():
    tournament = build_tournament(
        4, slug="stato", play=False, status=Tournament.Status.DRAFT, knockout=True
    )
    # build_tournament generates the rounds: a round exists, so the tournament runs
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.RUNNING
    groups_stage, knockout = _stages(tournament)
    play_stage(groups_stage)
    schedule.close_stage(groups_stage, per_group=2)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.RUNNING
    play_stage(knockout)
    play_stage(knockout)  # the final gets its lines once the semi-finals are in
    schedule.close_stage(knockout)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    assert build_document(tournament)["tournament"]["status"] == "finished"


def test_status_is_draft_without_rounds():
    tournament = build_tournament(4, slug="bozza", play=False, status=Tournament.Status.DRAFT)
    Match.objects.filter(round__stage__tournament=tournament).delete()
    tournament.rounds = None
    from tournaments.models import Round

    Round.objects.filter(stage__tournament=tournament).delete()
    assert lifecycle.sync_status(tournament) == Tournament.Status.DRAFT


# --------------------------------------------------------------------------- reopen and close


def test_reopen_shows_dependents_and_closing_again_keeps_the_bracket():
    _tournament, groups_stage, knockout = _closed_groups()
    first = Match.objects.filter(round__stage=knockout, round__number=1).exclude(
        outcome=Outcome.BYE
    )
    results.enter_result(first.first(), winning_deals(0, 2))
    bracket_before = list(Match.objects.filter(round__stage=knockout).values_list("id", "home"))

    lifecycle.reopen_stage(groups_stage)
    groups_stage.refresh_from_db()
    assert groups_stage.status == Stage.Status.RUNNING
    dependents = lifecycle.stage_dependents(groups_stage)
    assert len(dependents.seeded) == 2 and len(dependents.played) == 1
    assert ChangeLog.objects.filter(action="stage.reopened").exists()

    # closing again used to ask to "confirm" regenerating the bracket, with no way to confirm
    schedule.close_stage(groups_stage, per_group=2)
    groups_stage.refresh_from_db()
    assert groups_stage.status == Stage.Status.CLOSED
    after = list(Match.objects.filter(round__stage=knockout).values_list("id", "home"))
    assert after == bracket_before


def test_reopen_refuses_an_open_stage():
    tournament = build_tournament(4, slug="aperta", play=False)
    with pytest.raises(Exception, match=r"not closed|non è chiusa"):
        lifecycle.reopen_stage(_stages(tournament)[0])


# --------------------------------------------------------------------------- qualifier drift


def test_correction_changing_qualifiers_is_reported_and_reseeded():
    tournament, groups_stage, knockout = _closed_groups()
    assert lifecycle.qualifier_drift(groups_stage) is None
    lifecycle.reopen_stage(groups_stage)
    second, third = _swap_second_and_third(groups_stage)

    drift = lifecycle.qualifier_drift(groups_stage)
    assert drift is not None, "the bracket keeps the old qualifier silently"
    assert second in drift.out and third in drift.into
    marked = lifecycle.drift_by_match(tournament)
    assert {c.match.pk for c in drift.changes} <= set(marked)
    # nothing changed downstream by itself
    seeded = Match.objects.filter(round__stage=knockout, round__number=1)
    assert seeded.filter(Q(home=second) | Q(away=second)).exists()

    changed = lifecycle.reseed_unplayed(groups_stage)
    assert changed >= 1
    assert seeded.filter(Q(home=third) | Q(away=third)).exists()
    assert not seeded.filter(Q(home=second) | Q(away=second)).exists()
    assert lifecycle.qualifier_drift(groups_stage) is None


def test_played_knockout_match_is_kept_and_keep_silences_the_mark():
    _tournament, groups_stage, knockout = _closed_groups()
    play_stage(knockout)  # both semi-finals played
    lifecycle.reopen_stage(groups_stage)
    _swap_second_and_third(groups_stage)
    drift = lifecycle.qualifier_drift(groups_stage)
    assert drift is not None and all(change.played for change in drift.changes)
    assert drift.reseedable == []
    lifecycle.keep_bracket(groups_stage)
    assert lifecycle.qualifier_drift(groups_stage) is None
    assert ChangeLog.objects.filter(action="bracket.kept").exists()


# --------------------------------------------------------------------------- withdrawals


def test_withdrawal_during_a_stage_forfeits_the_remaining_matches():
    tournament = build_tournament(4, slug="ritiro", play=False)
    groups_stage = _stages(tournament)[0]
    play_stage(groups_stage, limit=2)
    line = Entry.objects.filter(tournament=tournament).order_by("seed").first().line
    pending = list(lifecycle.pending_matches_of(tournament, line))
    assert pending

    withdrawal = lifecycle.withdraw_line(tournament, line)

    assert {m.pk for m in withdrawal.forfeits} == {m.pk for m in pending}
    for match in Match.objects.filter(pk__in=[m.pk for m in pending]):
        assert match.status == Match.Status.DONE
        assert match.outcome == Outcome.FORFEIT and match.offender_id == line.pk
        loser = MatchResult.objects.get(match=match, line=line)
        assert loser.vp == 0 and not loser.won
    assert Entry.objects.get(tournament=tournament, line=line).withdrawn
    assert build_document(tournament)["lines"]  # the export carries the withdrawn flag
    assert ChangeLog.objects.filter(action="line.withdrawn").exists()


def test_withdrawal_before_the_stage_starts_removes_the_line_from_the_draw():
    tournament = build_tournament(8, slug="prima", groups=2)
    groups_stage, knockout = _stages(tournament)
    from tournaments.services.standings import stage_standings

    _group, rows = stage_standings(groups_stage)[0]
    qualifier = rows[0].line
    lifecycle.withdraw_line(tournament, qualifier)
    # no match of it was pending; the knock-out is drawn without it, the next line qualifies
    schedule.close_stage(groups_stage, per_group=2)
    assert Match.objects.filter(round__stage=knockout).filter(
        Q(home=rows[2].line) | Q(away=rows[2].line)
    )
    assert not Match.objects.filter(round__stage=knockout).filter(
        Q(home=qualifier) | Q(away=qualifier)
    )


def test_withdrawn_line_forfeits_a_knockout_match_once_its_opponent_is_known(
    django_capture_on_commit_callbacks,
):
    tournament, _groups_stage, knockout = _closed_groups()
    semis = list(
        Match.objects.filter(round__stage=knockout, round__number=1).order_by("bracket_position")
    )
    results.enter_result(semis[0], winning_deals(0, 1))
    finalist = Match.objects.get(pk=semis[0].pk).winner
    lifecycle.withdraw_line(tournament, finalist)
    final = Match.objects.get(pk=semis[0].next_match_id)
    assert final.status != Match.Status.DONE  # the other finalist is not known yet
    with django_capture_on_commit_callbacks(execute=True):
        results.enter_result(semis[1], winning_deals(1, 3))
    final.refresh_from_db()
    assert final.outcome == Outcome.FORFEIT and final.offender_id == finalist.pk


def test_closed_stage_results_still_refused():
    _tournament, groups_stage, _knockout = _closed_groups()
    match = Match.objects.filter(round__stage=groups_stage).exclude(outcome=Outcome.BYE).first()
    with pytest.raises(ResultError):
        results.enter_result(match, winning_deals(0, 0))
