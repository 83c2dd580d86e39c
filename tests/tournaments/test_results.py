"""Entering results: what is accepted, what is refused (and then nothing is stored)."""

import pytest
from django.utils import translation

from tests.tournaments.conftest import KO, RR, make_tournament
from tournaments.exceptions import ResultError, TournamentError
from tournaments.models import ChangeLog, Match, MatchResult, Outcome
from tournaments.services import results, schedule
from tournaments.signals import results_changed

from .helpers import deal, deals


def group_match(preset="scopa-classica-11", **kwargs):
    tournament = make_tournament(preset, n_lines=2, stages=[RR], **kwargs)
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    return Match.objects.get(round__stage=stage)


def knockout_match(preset="scopa-tre-smazzate", n=2):
    tournament = make_tournament(preset, n_lines=n, stages=[KO])
    stage = tournament.stages.get()
    schedule.generate_knockout(stage, [e.line for e in tournament.entries.order_by("seed")])
    return Match.objects.filter(round__stage=stage, round__number=1).order_by("bracket_position")


def stored(match):
    return (
        len(results.deals_of_match(match)),
        MatchResult.objects.filter(match=match).count(),
        ChangeLog.objects.filter(match=match).count(),
    )


def result_of(match):
    rows = {r.line_id: r for r in MatchResult.objects.filter(match=match)}
    home, away = rows[match.home_id], rows[match.away_id]
    return (home.points, home.vp, home.mp), (away.points, away.vp, away.mp)


@pytest.mark.django_db
def test_completed_match_to_11():
    match = group_match()
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    match.refresh_from_db()
    assert match.status == Match.Status.DONE and match.winner_id == match.home_id
    # 12-7: margin 5 → 15-5 on the 11-point table
    assert result_of(match) == ((12, 15, 5), (7, 5, -5))
    assert [d.points for d in results.deals_of_match(match)] == [(5, 2), (3, 4), (4, 1)]
    assert not match.has_tiebreak
    entry = ChangeLog.objects.get(match=match)
    assert entry.action == "result.entered" and entry.detail["totals"] == [12, 7]


@pytest.mark.django_db
def test_breakdown_categories_are_kept():
    match = group_match()
    first = {
        "points": [4, 1],
        "breakdown": [{"carte": 1, "denari": 1, "settebello": 1, "primiera": 1}, {"scope": 1}],
    }
    results.enter_result(match, [first, *deals((4, 1), (4, 1))])
    first_deal = results.deals_of_match(match)[0]
    assert first_deal.number == 0
    home = {"carte": 1, "denari": 1, "settebello": 1, "primiera": 1}
    assert first_deal.breakdown == (home, {"scope": 1})


REFUSALS = {
    "breakdown does not add up": [
        {"points": [4, 1], "breakdown": [{"scope": 3}, {"scope": 1}]},
        *deals((4, 1), (4, 1)),
    ],
    "negative points": [deal(-1, 2)],
    "not finished": deals((4, 1), (3, 2)),
    "deal after the match was decided": deals((6, 1), (6, 1), (1, 1)),
    "level at target": deals((6, 6), (5, 5)),
    "tie-break in a group": [*deals((4, 1), (4, 1), (4, 1)), deal(1, 0, tiebreak=True)],
    "penalty without timeout": [*deals((4, 1), (4, 1)), deal(4, 1, penalty=True)],
    "not a list": "11-7",
    "points not numbers": [{"points": ["a", 1], "breakdown": [{}, {}]}],
    "one side only": [{"points": [11], "breakdown": [{}]}],
    "bad category": [{"points": [1, 0], "breakdown": [{"Scope!": 1}, {}]}],
    "no deals": [],
    "more points than a deal can score": [deal(40000, 0)],
    "points beyond any integer column": [
        {"points": ["99999999999999999999999", 0], "breakdown": [{}, {}]}
    ],
    "a superscript digit": [{"points": ["²", 0], "breakdown": [{"scope": "²"}, {}]}],
}


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusals_store_nothing(name):
    match = group_match()
    with pytest.raises(ResultError) as error:
        results.enter_result(match, REFUSALS[name])
    assert str(error.value)
    match.refresh_from_db()
    assert match.status == Match.Status.SCHEDULED and match.winner_id is None
    assert stored(match) == (0, 0, 0)


@pytest.mark.django_db
def test_refusal_keeps_the_previous_result_intact():
    match = group_match()
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    with pytest.raises(ResultError):
        results.enter_result(match, deals((5, 2), (3, 4)))
    match.refresh_from_db()
    assert result_of(match) == ((12, 15, 5), (7, 5, -5))
    assert stored(match) == (3, 2, 1)


@pytest.mark.django_db
def test_reentry_replaces_cleanly():
    match = group_match()
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    results.enter_result(match, deals((2, 6), (1, 6)))
    match.refresh_from_db()
    assert match.winner_id == match.away_id
    assert result_of(match) == ((3, 3, -9), (12, 17, 9))
    assert stored(match) == (2, 2, 2)
    assert ChangeLog.objects.filter(match=match).first().detail["replaced"]["winner"] == (
        match.home_id
    )


@pytest.mark.django_db
def test_timeout_end_to_end_offender_still_ahead():
    """vp-tables.md: offender ahead after the penalty → margin 0, winner 14 VP (+4 MP),
    offender 0 VP (-14 MP) on the 11-point table."""
    match = group_match()
    results.enter_result(
        match,
        [*deals((2, 5), (2, 4)), deal(3, 0, penalty=True)],
        outcome=Outcome.TIMEOUT,
        offender=match.away,
    )
    match.refresh_from_db()
    assert match.outcome == Outcome.TIMEOUT and match.offender_id == match.away_id
    assert match.winner_id == match.home_id
    assert result_of(match) == ((7, 14, 4), (9, 0, -14))
    assert [d.is_penalty for d in results.deals_of_match(match)].count(True) == 1


@pytest.mark.django_db
def test_abandon_end_to_end_big_margin():
    match = group_match()
    results.enter_result(
        match,
        [*deals((5, 1), (4, 0)), deal(1, 0, penalty=True)],
        outcome=Outcome.ABANDON,
        offender=match.away,
    )
    # margin 9 → 17 VP, MP read back: smallest MP of the 17-3 row = 8; offender -14
    assert result_of(match) == ((10, 17, 8), (1, 0, -14))


@pytest.mark.django_db
def test_timeout_on_the_7_point_table():
    match = group_match("scopa-lampo-7")
    results.enter_result(
        match, [deal(0, 1, penalty=True)], outcome=Outcome.TIMEOUT, offender=match.home
    )
    assert result_of(match) == ((0, 0, -8), (1, 14, 4))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "kwargs",
    [
        {"outcome": Outcome.TIMEOUT},  # no offender
        {"outcome": Outcome.COMPLETED, "offender": "home"},
        {"outcome": Outcome.TIMEOUT, "offender": "home", "no_penalty": True},
        {"outcome": Outcome.BYE},
        {"outcome": "nonsense"},
    ],
)
def test_offence_refusals(kwargs):
    match = group_match()
    kwargs = dict(kwargs)
    if kwargs.get("offender") == "home":
        kwargs["offender"] = match.home
    rows = deals((1, 2)) if kwargs.pop("no_penalty", False) else [deal(1, 2, penalty=True)]
    with pytest.raises(ResultError):
        results.enter_result(match, rows, **kwargs)
    assert stored(match) == (0, 0, 0)


@pytest.mark.django_db
def test_forfeit():
    match = group_match()
    results.enter_result(match, [], outcome=Outcome.FORFEIT, offender=match.home)
    match.refresh_from_db()
    assert match.winner_id == match.away_id
    assert result_of(match)[1][1] == 14 and result_of(match)[0][1] == 0


@pytest.mark.django_db
def test_draw_in_a_group_by_number_of_deals():
    match = group_match("scopa-tre-smazzate")
    results.enter_result(match, deals((4, 1), (1, 4), (2, 2)))
    match.refresh_from_db()
    assert match.winner_id is None
    assert result_of(match) == ((7, 10, 0), (7, 10, 0))
    assert all(r.drawn for r in MatchResult.objects.filter(match=match))


@pytest.mark.django_db
def test_knockout_cannot_end_level_and_tiebreaks_decide():
    (match,) = knockout_match()
    level = deals((4, 1), (1, 4), (2, 2))
    with pytest.raises(ResultError):
        results.enter_result(match, level)
    with pytest.raises(ResultError):  # second tie-break after a decisive first one
        results.enter_result(match, [*level, deal(2, 1, tiebreak=True), deal(1, 0, tiebreak=True)])
    with pytest.raises(ResultError):  # level tie-break needs another
        results.enter_result(match, [*level, deal(2, 2, tiebreak=True)])
    assert stored(match) == (0, 0, 0)
    results.enter_result(match, [*level, deal(2, 2, tiebreak=True), deal(1, 3, tiebreak=True)])
    match.refresh_from_db()
    assert match.winner_id == match.away_id
    assert [d.is_tiebreak for d in results.deals_of_match(match)].count(True) == 2
    assert match.has_tiebreak


@pytest.mark.django_db
def test_third_level_tiebreak_last_capture_loses():
    (match,) = knockout_match()
    level = [*deals((4, 1), (1, 4), (2, 2)), *[deal(2, 2, tiebreak=True) for _ in range(2)]]
    with pytest.raises(ResultError):
        results.enter_result(match, [*level, deal(1, 1, tiebreak=True)])
    results.enter_result(match, [*level, deal(1, 1, tiebreak=True, last_capture=0)])
    match.refresh_from_db()
    assert match.winner_id == match.away_id
    # margin 0 with a winner: the 0-margin row
    assert result_of(match) == ((12, 10, 0), (12, 10, 0))


@pytest.mark.django_db
def test_later_knockout_result_blocks_changing_the_feeder():
    first_round = list(knockout_match(n=4))
    for m in first_round:
        results.enter_result(m, deals((4, 1), (4, 1), (4, 1)))
    final = Match.objects.get(round__number=2, is_third_place=False)
    results.enter_result(final, deals((4, 1), (4, 1), (4, 1)))
    feeder = first_round[0]
    with translation.override("en"), pytest.raises(ResultError, match="delete that result first"):
        results.enter_result(feeder, deals((1, 4), (1, 4), (1, 4)))
    with pytest.raises(ResultError):
        results.delete_result(feeder)
    # same winner again is fine: nothing later changes
    results.enter_result(feeder, deals((4, 2), (4, 2), (4, 2)))
    results.delete_result(final)
    results.enter_result(feeder, deals((1, 4), (1, 4), (1, 4)))
    final.refresh_from_db()
    feeder.refresh_from_db()
    assert feeder.away_id in (final.home_id, final.away_id)
    third = Match.objects.get(is_third_place=True)
    assert feeder.home_id in (third.home_id, third.away_id)


@pytest.mark.django_db
def test_delete_result_clears_the_slot_it_filled():
    first_round = list(knockout_match(n=4))
    results.enter_result(first_round[0], deals((4, 1), (4, 1), (4, 1)))
    final = Match.objects.get(round__number=2, is_third_place=False)
    assert final.home_id == first_round[0].home_id
    results.delete_result(first_round[0])
    final.refresh_from_db()
    assert final.home_id is None
    assert stored(first_round[0])[:2] == (0, 0)


@pytest.mark.django_db(transaction=True)
def test_signal_is_sent_after_commit():
    match = group_match()
    received = []

    def listener(sender, matches, **kwargs):
        received.extend((m.pk, m.status) for m in matches)

    results_changed.connect(listener)
    try:
        results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    finally:
        results_changed.disconnect(listener)
    assert received == [(match.pk, Match.Status.DONE)]


@pytest.mark.django_db
def test_apply_verified_result_from_a_verdict():
    match = group_match()
    verdict = {
        "valid": True,
        "deals": [
            {"points": [0, 0], "breakdown": [{}, {}], "tiebreak": False, "void": True},
            {"points": [5, 2], "tiebreak": False, "void": False,
             "breakdown": [{"scope": 2, "carte": 1, "denari": 1, "primiera": 1},
                           {"settebello": 1, "scope": 1}]},
            {"points": [6, 1], "tiebreak": False, "void": False,
             "breakdown": [{"scope": 6}, {"scope": 1}]},
        ],
        "totals": [11, 3],
        "winner": 0,
        "margin": 8,
        "outcome": {"kind": "completed", "seat": None, "side": None},
        "sides": 2,
    }  # fmt: skip
    results.apply_verified_result(match, verdict, source="record:1")
    assert result_of(match) == ((11, 17, 8), (3, 3, -8))
    assert [d.number for d in results.deals_of_match(match)] == [1, 2]
    detail = ChangeLog.objects.get(match=match).detail
    assert detail["source"] == "record" and detail["record"] == "record:1"


@pytest.mark.django_db
def test_invalid_verdict_is_refused():
    match = group_match()
    with pytest.raises(ResultError):
        results.apply_verified_result(match, {"valid": False, "errors": []})
    with pytest.raises(ResultError):
        results.apply_verified_result(
            match,
            {"valid": True, "deals": [], "totals": [1, 2, 3], "winner": 0, "outcome": {}},
        )
    assert stored(match) == (0, 0, 0)


@pytest.mark.django_db
def test_engine_records_verified_and_stored():
    engine = pytest.importorskip("scopa")
    match = group_match()
    tournament = match.round.stage.tournament
    record = engine.simulate_match(end=tournament.match_end(), seed=7)
    verdict = engine.verify_document(record)
    results.apply_verified_result(match, verdict)
    home, away = result_of(match)
    assert (home[0], away[0]) == tuple(verdict["totals"])
    timeout = engine.simulate_match(
        end=tournament.match_end(),
        seed=8,
        outcome={"kind": "timeout", "seat": 1, "deal": 1, "play": 9},
    )
    verdict = engine.verify_document(timeout)
    assert verdict["valid"], verdict["errors"]
    # a second record that disagrees waits for the organizer, who accepts it
    saved = results.apply_verified_result(match, verdict)
    assert saved.version.status == "awaiting"
    results.accept_version(saved.version)
    match.refresh_from_db()
    assert match.outcome == Outcome.TIMEOUT and match.offender_id == match.away_id
    home, away = result_of(match)
    assert away[1] == 0 and home[1] >= 14
    assert (home[0], away[0]) == tuple(verdict["totals"])


@pytest.mark.django_db
def test_closed_stage_refuses_changes():
    from tournaments.models import Stage

    match = group_match()
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    stage = match.round.stage
    stage.status = Stage.Status.CLOSED
    stage.save()
    with translation.override("en"), pytest.raises(ResultError, match="closed"):
        results.enter_result(Match.objects.get(pk=match.pk), deals((1, 6), (1, 6)))
    with translation.override("en"), pytest.raises(ResultError, match="closed"):
        results.delete_result(Match.objects.get(pk=match.pk))
    assert result_of(match) == ((12, 15, 5), (7, 5, -5))


@pytest.mark.django_db
def test_italian_counts_of_one_are_singular():
    """The organizer's last missing match or deal is the common case: "1 incontro", not
    "1 incontri"."""
    match = group_match("scopa-tre-smazzate")
    with translation.override("it"):
        with pytest.raises(ResultError) as error:
            results.enter_result(match, deals((3, 1)))
        assert "ne è stata inserita solo 1." in str(error.value)
        with pytest.raises(TournamentError) as error:
            schedule.close_stage(match.round.stage)
        assert str(error.value).startswith("1 incontro di “Gironi” non ha ancora un risultato")
