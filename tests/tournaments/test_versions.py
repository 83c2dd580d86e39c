"""Results as versions: precedence record vs desk, stale and repeated saves, the database rule."""

import threading

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.urls import reverse

from tests.tournaments.conftest import RR, make_tournament
from tests.tournaments.helpers import deals
from tournaments.exceptions import ResultError, StaleResult
from tournaments.models import ChangeLog, Match, MatchResult, ResultVersion
from tournaments.services import results, schedule


def _match(name="Versioni"):
    tournament = make_tournament(n_lines=2, stages=[RR], name=name)
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    return Match.objects.get(round__stage=stage)


def _verdict(home, away):
    """A verified record's verdict: one deal, home wins ``home``–``away``."""
    return {
        "valid": True,
        "sides": 2,
        "totals": [home, away],
        "winner": 0 if home > away else 1,
        "deals": [{"points": [home, away], "breakdown": [{"scope": home}, {"scope": away}]}],
        "outcome": {"kind": "completed"},
    }


def _totals(match):
    by_line = {r.line_id: r.points for r in MatchResult.objects.filter(match=match)}
    return by_line.get(match.home_id), by_line.get(match.away_id)


@pytest.mark.django_db
def test_a_record_after_a_desk_result_waits_for_a_decision():
    match = _match()
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    saved = results.apply_verified_result(match, _verdict(11, 7))
    assert saved.version.status == ResultVersion.Status.AWAITING
    assert _totals(match) == (12, 7)  # the desk's result stays in force
    results.accept_version(saved.version, based_on=1)
    assert _totals(match) == (11, 7)
    assert ResultVersion.objects.get(match=match, number=1).status == "superseded"


@pytest.mark.django_db
def test_a_rejected_record_changes_nothing():
    match = _match()
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    saved = results.apply_verified_result(match, _verdict(11, 7))
    results.reject_version(saved.version, reason="wrong table")
    assert _totals(match) == (12, 7)
    assert ResultVersion.objects.get(pk=saved.version.pk).status == "rejected"
    assert ChangeLog.objects.filter(match=match, action="result.rejected").count() == 1


@pytest.mark.django_db
def test_a_desk_result_after_a_record_supersedes_it():
    match = _match()
    results.apply_verified_result(match, _verdict(12, 2))
    results.enter_result(
        match, deals((2, 4), (2, 4), (1, 3)), based_on=1, reason="sheet signed by both"
    )
    assert _totals(match) == (5, 11)
    record, desk = ResultVersion.objects.filter(match=match).order_by("number")
    assert (record.status, desk.status) == ("superseded", "in_force")
    assert desk.based_on_id == record.pk and desk.reason == "sheet signed by both"


@pytest.mark.django_db
def test_a_second_in_force_version_is_refused_by_the_database():
    match = _match()
    results.enter_result(match, deals((4, 1), (4, 2), (3, 1)))
    with pytest.raises(IntegrityError), transaction.atomic():
        ResultVersion.objects.create(match=match, number=2, source="desk", status="in_force")


@pytest.mark.django_db
def test_a_stale_save_is_refused_and_a_repeated_one_stores_nothing():
    match = _match()
    results.enter_result(match, deals((4, 1), (4, 2), (3, 1)), based_on=None)
    # the same form posted again (back button, double click): nothing new
    again = results.save_result(match, deals((4, 1), (4, 2), (3, 1)), based_on=None)
    assert not again.created
    assert ResultVersion.objects.filter(match=match).count() == 1
    assert ChangeLog.objects.filter(match=match).count() == 1
    # someone else's entry made on the empty match is refused, not stored over it
    with pytest.raises(StaleResult) as refused:
        results.enter_result(match, deals((1, 4), (1, 4), (1, 3)), based_on=None)
    assert refused.value.current.number == 1
    assert _totals(match) == (11, 4)


@pytest.mark.django_db
def test_delete_needs_no_result_twice():
    match = _match()
    results.enter_result(match, deals((4, 1), (4, 2), (3, 1)))
    results.delete_result(match, based_on=1, reason="wrong match")
    assert _totals(match) == (None, None)
    again = results.delete_result(match, based_on=1, reason="wrong match")
    assert not again.created
    with pytest.raises(ResultError):
        results.delete_result(match)


@pytest.mark.django_db
def test_desk_stale_form_is_shown_again_with_both_results(client, django_user_model):
    match = _match()
    tournament = match.round.stage.tournament
    user = django_user_model.objects.create_user("segreteria", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    form = {"rows": "3", "outcome": "completed", "offender": "", "action": "save"}
    mine = {**form, "based_on": ""}
    theirs = {**form, "based_on": ""}
    for i, ((mh, ma), (th, ta)) in enumerate(
        zip([(4, 1), (4, 2), (3, 1)], [(1, 4), (1, 4), (0, 3)], strict=True)
    ):
        mine.update({f"d{i}-home-scope": str(mh), f"d{i}-away-scope": str(ma)})
        theirs.update({f"d{i}-home-scope": str(th), f"d{i}-away-scope": str(ta)})
    assert client.post(url, theirs).status_code == 302
    response = client.post(url, mine)
    assert response.status_code == 409
    html = response.content.decode()
    assert 'name="d0-home-scope" value="4"' in html  # the user's entry is kept
    assert 'name="based_on" value="1"' in html  # the next save is based on what is in force
    assert _totals(match) == (2, 11)
    # the double post of the first save logged nothing more
    assert client.post(url, theirs).status_code == 302
    assert ChangeLog.objects.filter(match=match, action="result.entered").count() == 1


@pytest.mark.django_db
def test_desk_refuses_a_result_for_a_match_without_both_lines(client, django_user_model):
    match = _match()
    tournament = match.round.stage.tournament
    Match.objects.filter(pk=match.pk).update(away=None)
    user = django_user_model.objects.create_user("segreteria2", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    assert 'value="save"' not in client.get(url).content.decode()
    data = {"rows": "3", "outcome": "completed", "action": "save", "based_on": ""}
    data.update({"d0-home-scope": "4", "d0-away-scope": "1"})
    assert client.post(url, data).status_code == 400
    assert not ResultVersion.objects.filter(match=match).exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_saves_from_the_same_version_one_wins_one_is_refused():
    match = _match("Concorrenza versioni")
    barrier = threading.Barrier(2)
    outcomes = []

    def save(entry):
        try:
            barrier.wait(timeout=10)
            results.enter_result(Match.objects.get(pk=match.pk), entry, based_on=None)
            outcomes.append("saved")
        except StaleResult:
            outcomes.append("stale")
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=save, args=(entry,))
        for entry in (deals((4, 1), (4, 2), (3, 1)), deals((1, 4), (1, 4), (0, 3)))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["saved", "stale"]
    assert ResultVersion.objects.filter(match=match).count() == 1
    assert ChangeLog.objects.filter(match=match, action="result.entered").count() == 1


def _record_of(*pairs):
    """A verified record's verdict with these deals (all in scope)."""
    home = sum(h for h, _a in pairs)
    away = sum(a for _h, a in pairs)
    return {
        "valid": True,
        "sides": 2,
        "totals": [home, away],
        "winner": 0 if home > away else 1,
        "deals": [
            {"points": [h, a], "breakdown": [{"scope": h} if h else {}, {"scope": a} if a else {}]}
            for h, a in pairs
        ],
        "outcome": {"kind": "completed"},
    }


def _sheet_deals(version):
    return [
        {"points": d["points"], "breakdown": d["breakdown"], "tiebreak": d["tiebreak"]}
        for d in version.sheet["deals"]
    ]


@pytest.mark.django_db
def test_a_correction_that_ends_the_match_earlier_replaces_the_records_deals_whole():
    """The desk form starts from the record's deals; a correction that ends the match
    sooner was refused ("already over after deal 3") until the organizer cleared the record's
    later rows by hand. The rows still as the record had them are left out; the new version's
    deals are the corrected sheet only."""
    match = _match()
    record = results.apply_verified_result(match, _record_of((4, 2), (3, 3), (3, 2), (0, 4)))
    assert record.version.status == ResultVersion.Status.IN_FORCE
    typed = _sheet_deals(record.version)
    typed[2] = {"points": [4, 2], "breakdown": [{"scope": 4}, {"scope": 2}]}  # 11–7 after deal 3
    saved = results.save_result(match, typed, based_on=1, reason="una scopa in più")
    assert saved.created and saved.dropped == 1
    assert [d["points"] for d in saved.version.sheet["deals"]] == [[4, 2], [3, 3], [4, 2]]
    assert _totals(match) == (11, 7)
    match.refresh_from_db()
    assert match.winner_id == match.home_id


@pytest.mark.django_db
def test_a_deal_typed_after_the_end_of_a_corrected_match_is_still_refused():
    match = _match()
    results.apply_verified_result(match, _record_of((4, 2), (3, 3), (3, 2), (0, 4)))
    typed = deals((4, 2), (3, 3), (4, 2), (0, 5))  # the last deal is not the record's
    with pytest.raises(ResultError):
        results.save_result(match, typed, based_on=1, reason="una scopa in più")
    assert ResultVersion.objects.filter(match=match).count() == 1
