"""Sheets at the table on PostgreSQL: submit, countersign, dispute, expiry, the referee, and the
precedence against the desk's result and a verified record."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from scoresheets.exceptions import ReportError
from scoresheets.models import TableReport
from scoresheets.services import links, reports
from tests.tournaments.conftest import KO, make_tournament
from tournaments.exceptions import ResultError, StaleResult
from tournaments.models import ChangeLog, Match, MatchResult, ResultVersion
from tournaments.services import lifecycle, results, schedule

State = TableReport.State
V = ResultVersion.Status

# Home wins 11-3 in two deals (classic scopa to 11); what the phone sends (no points: the
# server adds the categories up).
SHEET = [
    {
        "breakdown": [
            {"carte": 1, "denari": 1, "settebello": 1, "scope": 2},
            {"primiera": 1, "scope": 1},
        ]
    },
    {"breakdown": [{"carte": 1, "denari": 1, "primiera": 1, "scope": 3}, {"settebello": 1}]},
]
# Away wins 11-7: the other side's memory of the same match.
OTHER = [
    {
        "breakdown": [
            {"carte": 1, "denari": 1, "settebello": 1, "scope": 2},
            {"primiera": 1, "scope": 1},
        ]
    },
    {
        "breakdown": [
            {"scope": 2},
            {"carte": 1, "denari": 1, "settebello": 1, "primiera": 1, "scope": 5},
        ]
    },
]


@pytest.fixture
def sides(running, first_match):
    return (
        links.link_for(running, first_match.home),
        links.link_for(running, first_match.away),
    )


def _submit(link, match, sheet=SHEET, key=None, **kwargs):
    return reports.submit(link, match, sheet, client_key=key or uuid.uuid4(), **kwargs)


def _totals(match):
    return sorted(MatchResult.objects.filter(match=match).values_list("line_id", "points"))


def test_submitted_sheet_waits_then_both_signed_is_in_force(first_match, sides):
    home, away = sides
    reports.keep_draft(home, first_match, SHEET[:1])
    submitted = _submit(home, first_match, based_on="")
    report = submitted.report
    assert submitted.created and report.state == State.AWAITING
    assert report.version.status == V.PROPOSED and report.version.source == "players"
    assert not MatchResult.objects.filter(match=first_match).exists()
    assert TableReport.objects.filter(match=first_match).count() == 1  # the draft became it

    signed = reports.accept(away, first_match)
    signed.version.refresh_from_db()
    assert signed.state == State.ACCEPTED and signed.version.status == V.IN_FORCE
    assert _totals(first_match) == sorted([(first_match.home_id, 11), (first_match.away_id, 3)])
    actions = list(
        ChangeLog.objects.filter(match=first_match).order_by("id").values_list("action", flat=True)
    )
    assert actions == [
        "table.started",
        "result.proposed",
        "table.submitted",
        "result.countersigned",
        "table.accepted",
    ]
    # signing again, or the same submission again, stores nothing
    assert reports.accept(away, first_match) == signed
    again = _submit(home, first_match, key=report.client_key)
    assert not again.created and again.report == report
    assert ResultVersion.objects.filter(match=first_match).count() == 1


def test_the_same_submission_twice_stores_one_version(first_match, sides):
    key = uuid.uuid4()
    first = _submit(sides[0], first_match, key=key, based_on="")
    second = _submit(sides[0], first_match, key=str(key), based_on="")
    assert first.created and not second.created and first.report == second.report
    assert ResultVersion.objects.filter(match=first_match).count() == 1


def test_a_stale_submission_is_refused(first_match, sides):
    results.save_result(first_match, reports.deals_payload(OTHER))  # the desk, meanwhile
    with pytest.raises(StaleResult, match="entrato in vigore un altro risultato"):
        _submit(sides[0], first_match, based_on="")
    assert not TableReport.objects.filter(match=first_match).exclude(state=State.DRAFT).exists()
    assert ResultVersion.objects.filter(match=first_match).count() == 1


def test_an_impossible_sheet_is_refused_with_the_referees_sentence(first_match, sides):
    too_much = [{"breakdown": [{"carte": 2, "scope": 9}, {}]}]
    with pytest.raises(ResultError):
        _submit(sides[0], first_match, too_much)
    unfinished = SHEET[:1]
    with pytest.raises(ResultError, match="11"):
        _submit(sides[0], first_match, unfinished)
    assert not ResultVersion.objects.filter(match=first_match).exists()


def test_signed_over_the_desks_result_waits_for_the_referee(first_match, sides):
    home, away = sides
    report = _submit(home, first_match).report
    desk = results.save_result(first_match, reports.deals_payload(OTHER)).version
    signed = reports.accept(away, first_match)
    signed.version.refresh_from_db()
    assert signed.version.status == V.AWAITING  # never over the organizer's result silently
    assert results.in_force(first_match) == desk and reports.for_referee(signed)
    reports.decide(report, "reported", user=None, reason="seen both sheets", based_on=desk.number)
    report.refresh_from_db()
    assert report.state == State.DECIDED and results.in_force(first_match) == report.version
    assert _totals(first_match)[0][1] in (11, 3)
    assert ChangeLog.objects.filter(match=first_match, action="table.decided").exists()


def test_a_verified_record_does_not_push_aside_the_players_result(first_match, sides):
    home, away = sides
    _submit(home, first_match)
    players = reports.accept(away, first_match).version
    verdict = {
        "valid": True,
        "totals": [4, 11],
        "winner": 1,
        "deals": [
            {
                "points": [4, 11],
                "breakdown": [
                    {"carte": 1, "denari": 1, "settebello": 1, "primiera": 1},
                    {"scope": 11},
                ],
            }
        ],
    }
    record = results.apply_verified_result(first_match, verdict).version
    assert record.status == V.AWAITING and results.in_force(first_match) == players


def test_dispute_with_own_sheet_and_the_referees_decision(first_match, sides):
    home, away = sides
    report = _submit(home, first_match).report
    with pytest.raises(ReportError):
        reports.dispute(away, first_match, "  ")
    disputed = reports.dispute(away, first_match, "Deal 2 was ours", OTHER)
    assert disputed.state == State.DISPUTED and disputed.answer_comment == "Deal 2 was ours"
    assert disputed.version.status == V.AWAITING  # refreshed by refer_version
    assert disputed.counter_version.status == V.AWAITING
    reports.decide(disputed, "counter", user=None, based_on="")
    report.refresh_from_db()
    report.version.refresh_from_db()
    assert report.state == State.DECIDED and report.version.status == V.REJECTED
    assert Match.objects.get(pk=first_match.pk).winner_id == first_match.away_id
    with pytest.raises(ReportError):  # the players' part is over
        _submit(home, first_match)


def test_both_sides_typing_the_sheet_sign_or_dispute_it(running, first_match, sides):
    home, away = sides
    _submit(home, first_match)
    answer = _submit(away, first_match).report
    assert answer.side == "home" and answer.state == State.ACCEPTED
    second = Match.objects.filter(round__stage__tournament=running).exclude(pk=first_match.pk)
    second = (
        second.filter(home=first_match.home).first() or second.filter(away=first_match.home).first()
    )
    other_link = links.link_for(
        running, second.away if second.home == first_match.home else second.home
    )
    _submit(home, second)
    disputed = _submit(other_link, second, OTHER).report
    assert disputed.state == State.DISPUTED and disputed.counter_version is not None


def test_unanswered_sheets_expire_to_the_referee(first_match, sides):
    home, away = sides
    report = _submit(home, first_match).report
    assert reports.expire_due() == 0
    TableReport.objects.filter(pk=report.pk).update(
        submitted_at=timezone.now()
        - timedelta(minutes=first_match.round.stage.tournament.countersign_minutes + 1)
    )
    from scoresheets.tasks import expire_reports

    assert expire_reports() == 1
    report.refresh_from_db()
    assert (
        report.state == State.EXPIRED
        and ResultVersion.objects.get(pk=report.version_id).status == V.AWAITING
    )
    with pytest.raises(ReportError):
        reports.accept(away, first_match)
    assert ChangeLog.objects.filter(match=first_match, action="table.expired").count() == 1


def test_a_link_acts_only_on_its_own_matches_and_lines_that_play(running, first_match, sides):
    foreign = (
        Match.objects.filter(round__stage__tournament=running)
        .exclude(home=first_match.home)
        .exclude(away=first_match.home)
        .first()
    )
    with pytest.raises(ReportError):
        _submit(sides[0], foreign)
    with pytest.raises(ReportError):
        reports.keep_draft(sides[0], foreign, [])
    links.revoke(sides[0])
    with pytest.raises(ReportError):
        _submit(sides[0], first_match)
    lifecycle.withdraw_line(running, first_match.away)
    assert reports.entry_refusal(Match.objects.get(pk=first_match.pk))


def test_a_later_desk_result_settles_a_disputed_sheet(first_match, sides):
    home, away = sides
    _submit(home, first_match)
    disputed = reports.dispute(away, first_match, "no")
    results.save_result(first_match, reports.deals_payload(OTHER))
    reports.on_result_changed(first_match)
    disputed.refresh_from_db()
    assert disputed.state == State.DECIDED
    assert ResultVersion.objects.get(pk=disputed.version_id).status == V.REJECTED


def test_progress_while_typed(first_match):
    match = Match.objects.select_related("round__stage__tournament", "home", "away").get(
        pk=first_match.pk
    )
    partial = results.sheet_progress(match, reports.deals_payload(SHEET[:1]))
    assert partial.totals == (5, 2) and not partial.over and "11" in partial.sentence
    done = results.sheet_progress(match, reports.deals_payload(SHEET))
    assert done.over and done.winner_side == 0
    with pytest.raises(ResultError):
        results.sheet_progress(match, reports.deals_payload(SHEET + SHEET[:1]))


def test_a_disputed_sheet_accepted_on_the_desks_result_page_is_settled(first_match, sides):
    home, away = sides
    _submit(home, first_match)
    disputed = reports.dispute(away, first_match, "no", OTHER)
    results.accept_version(disputed.counter_version)  # the referee, from the desk's match page
    reports.on_result_changed(first_match)
    disputed.refresh_from_db()
    assert disputed.state == State.DECIDED and not reports.for_referee(disputed)
    assert ResultVersion.objects.get(pk=disputed.version_id).status == V.REJECTED
    assert results.in_force(first_match) == disputed.counter_version


def test_a_knockout_level_after_its_deals_asks_for_tie_break_deals(db):
    from tests.tournaments.conftest import KO, make_tournament
    from tournaments.services import schedule

    tournament = make_tournament("scopa-tre-smazzate", n_lines=4, stages=[KO])
    stage = tournament.stages.get()
    schedule.generate_knockout(stage, schedule.seeded_lines(tournament))
    match = Match.objects.filter(round__stage=stage, home__isnull=False, away__isnull=False).first()
    level = [  # 11-11 after the three deals
        {
            "breakdown": [
                {"carte": 1, "denari": 1, "settebello": 1, "scope": 2},
                {"primiera": 1, "scope": 1},
            ]
        },
        {
            "breakdown": [
                {"primiera": 1, "scope": 1},
                {"carte": 1, "denari": 1, "settebello": 1, "scope": 2},
            ]
        },
        {
            "breakdown": [
                {"carte": 1, "denari": 1, "scope": 2},
                {"settebello": 1, "primiera": 1, "scope": 2},
            ]
        },
    ]
    progress = results.sheet_progress(match, reports.deals_payload(level))
    assert not progress.over and progress.next_tiebreak
    tiebreak = {
        "breakdown": [{"carte": 1, "denari": 1, "primiera": 1}, {"settebello": 1}],
        "tiebreak": True,
    }
    done = results.sheet_progress(match, reports.deals_payload([*level, tiebreak]))
    assert done.over and done.winner_side == 0
    home = links.link_for(tournament, match.home)
    report = reports.submit(home, match, [*level, tiebreak], client_key=uuid.uuid4()).report
    assert report.version.sheet["deals"][-1]["tiebreak"] is True


def test_room_states_follow_the_table(running, first_match, sides):
    """The desk's room (scoresheets/room.py) follows a sheet from typing to the referee."""
    from scoresheets.room import RoomState, room_states

    def state():
        return {t.match_id: t.state for t in room_states(first_match.round)}

    assert set(state().values()) == {RoomState.WAITING}
    reports.keep_draft(sides[0], first_match, SHEET[:1])
    assert state()[first_match.pk] == RoomState.ENTERING
    _submit(sides[0], first_match)
    assert state()[first_match.pk] == RoomState.AWAITING
    reports.dispute(sides[1], first_match, "no")
    assert state()[first_match.pk] == RoomState.DISPUTED


def test_the_referee_keeps_the_desks_result_over_a_signed_sheet(first_match, sides):
    home, away = sides
    report = _submit(home, first_match).report
    desk = results.save_result(first_match, reports.deals_payload(OTHER)).version
    reports.accept(away, first_match)
    reports.decide(
        report, "neither", user=None, reason="the desk's result is right", based_on=desk.number
    )
    report.refresh_from_db()
    assert report.state == State.DECIDED and results.in_force(first_match) == desk
    assert ResultVersion.objects.get(pk=report.version_id).status == V.REJECTED


def test_the_results_to_settle_are_found_in_one_query_of_the_reports_alone(
    running, first_match, sides, django_assert_num_queries
):
    """Asked after every result written (a group of verified records included): a match with an
    open sheet is found, one without is not, and only the reports' table is read."""
    reports.keep_draft(sides[0], first_match, SHEET[:1])
    others = list(Match.objects.filter(round__stage__tournament=running).exclude(pk=first_match.pk))
    with django_assert_num_queries(1) as queries:
        settle = reports.matches_to_settle([first_match, *others])
    assert [m.pk for m in settle] == [first_match.pk]
    assert "tournaments_match" not in queries.captured_queries[0]["sql"]


def test_the_referee_names_the_version_in_force_he_decided_against(first_match, sides):
    """A referee's decision changes the result in force only when it names
    the version it was shown (None: VersionRequired; another one: StaleResult)."""
    from tournaments.exceptions import StaleResult, VersionRequired

    home, away = sides
    report = _submit(home, first_match).report
    desk = results.save_result(first_match, reports.deals_payload(OTHER)).version
    reports.accept(away, first_match)
    for choice in ("reported", "neither"):
        with pytest.raises(VersionRequired):
            reports.decide(report, choice, user=None)
        with pytest.raises(StaleResult):
            reports.decide(report, choice, user=None, based_on=desk.number + 5)
        report.refresh_from_db()
        assert report.state != State.DECIDED and results.in_force(first_match) == desk
    reports.decide(report, "reported", user=None, based_on=desk.number)
    assert results.in_force(first_match) == report.version


def test_a_sheet_of_a_line_moved_out_of_a_knockout_match_cannot_be_signed(db):
    tournament = make_tournament(n_lines=4, stages=[KO])
    stage = tournament.stages.get()
    schedule.generate_knockout(stage, schedule.seeded_lines(tournament))
    semis = list(
        Match.objects.filter(round__stage=stage, round__number=1, home__isnull=False).order_by("pk")
    )
    for semi in semis:
        results.save_result(semi, reports.deals_payload(SHEET))  # home wins both
    final = Match.objects.get(pk=semis[0].next_match_id)
    winner = semis[0].home
    side = "home" if final.home_id == winner.pk else "away"
    opponent = final.away if side == "home" else final.home
    reports.submit(links.link_for(tournament, winner), final, SHEET, client_key=uuid.uuid4())
    # the desk corrects the semi-final: the other line goes to the final instead
    current = results.in_force(semis[0])
    results.save_result(semis[0], reports.deals_payload(OTHER), based_on=current.number)
    final.refresh_from_db()
    assert winner.pk not in (final.home_id, final.away_id)
    with pytest.raises(ResultError):
        reports.accept(links.link_for(tournament, opponent), final)
    assert final.status != Match.Status.DONE
