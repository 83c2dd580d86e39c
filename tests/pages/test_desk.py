"""The organizer's desk: who gets in, result entry through the services, stage actions."""

import logging

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape

from tests.pages.factories import build_tournament
from tournaments.models import ChangeLog, Match, MatchResult, Stage
from tournaments.services.results import deals_of_match

pytestmark = pytest.mark.django_db


@pytest.fixture
def tournament():
    return build_tournament(4, slug="scrivania", play=False)


@pytest.fixture
def organizer(tournament):
    user = User.objects.create_user("organizzatore", password="x-pass-12345")
    tournament.organizers.add(user)
    return user


@pytest.fixture
def match(tournament):
    return (
        Match.objects.filter(round__stage__tournament=tournament, away__isnull=False)
        .order_by("round__number", "table_number")
        .first()
    )


def _form(match, deals, *, outcome="completed", offender="", action="save", based_on=""):
    """POST data of the result form: ``deals`` as ``[(home_breakdown, away_breakdown)]``;
    ``based_on`` is the version in force the form was read at ("": none, the page's own)."""
    data = {
        "rows": str(len(deals)),
        "outcome": outcome,
        "offender": offender,
        "action": action,
        "based_on": based_on,
    }
    for i, (home, away) in enumerate(deals):
        for side, breakdown in (("home", home), ("away", away)):
            for category, value in breakdown.items():
                data[f"d{i}-{side}-{category}"] = str(value)
    return data


WIN = {"scope": 7, "carte": 1, "denari": 1, "settebello": 1, "primiera": 1}


def test_anonymous_is_sent_to_login(client, tournament, match):
    for url in (
        reverse("desk:home"),
        reverse("desk:tournament", args=[tournament.slug]),
        reverse("desk:match", args=[tournament.slug, match.pk]),
        reverse("desk:print", args=[tournament.slug, match.round_id]),
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("desk:login"))


def test_non_organizer_gets_403(client, tournament, match):
    User.objects.create_user("curioso", password="x-pass-12345")
    client.login(username="curioso", password="x-pass-12345")
    assert client.get(reverse("desk:tournament", args=[tournament.slug])).status_code == 403
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    assert client.get(url).status_code == 403
    assert client.post(url, _form(match, [(WIN, {})])).status_code == 403
    assert not MatchResult.objects.exists()
    assert client.get(reverse("desk:home")).status_code == 200  # lists nothing


def test_staff_status_alone_opens_no_desk(client, tournament):
    """Staff without a role in the tournament: 403 on a public one's desk (it was 200)."""
    User.objects.create_user("staff", password="x-pass-12345", is_staff=True)
    client.login(username="staff", password="x-pass-12345")
    assert client.get(reverse("desk:tournament", args=[tournament.slug])).status_code == 403


def test_desk_lists_missing_results_and_changes(client, tournament, organizer):
    client.force_login(organizer)
    html = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert "Enter result" in html or "Inserisci" in html
    # the change log, written by the services, shown as labels and sentences, not codes
    assert "Rounds generated" in html or "Turni generati" in html
    assert "rounds.generated" not in html


def test_the_desk_of_a_tournament_without_stages_is_a_page_not_a_500(client):
    """A tournament made from the desk's first step has no stage yet (the duplicate session
    is added later): its desk page opens all the same."""
    from tests.tournaments.conftest import make_tournament

    empty = make_tournament(n_lines=4)
    assert not empty.stages.exists()
    user = User.objects.create_user("direttrice", password="x-pass-12345")
    empty.organizers.add(user)
    client.force_login(user)
    assert client.get(reverse("desk:tournament", args=[empty.slug])).status_code == 200


@pytest.mark.parametrize(
    ("action", "label"),
    [
        ("lines.imported", "Linee importate (CSV)"),
        ("line.added", "Linea aggiunta"),
        ("admin.match.changed", "Modificato dall'amministrazione"),
        ("admin.entry.deleted", "Eliminato dall'amministrazione"),
    ],
)
def test_every_change_log_action_has_an_italian_label(client, tournament, organizer, action, label):
    ChangeLog.objects.create(tournament=tournament, action=action, detail={})
    client.force_login(organizer)
    with translation.override("it"):
        html = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert f'<th scope="row">{escape(label)}' in html
    assert f">{action}<" not in html  # a label, not the code


def test_result_that_does_not_add_up_is_refused_and_nothing_saved(client, organizer, match):
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    changes = ChangeLog.objects.count()
    data = _form(match, [(WIN, {})])
    data["d0-home-points"] = "12"  # the categories add up to 11
    response = client.post(url, data)
    assert response.status_code == 400
    assert "msg-error" in response.content.decode()
    assert deals_of_match(match) == []
    assert not MatchResult.objects.filter(match=match).exists()
    assert ChangeLog.objects.count() == changes


def test_short_match_is_refused(client, organizer, match):
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    response = client.post(url, _form(match, [({"scope": 3}, {"carte": 1})]))
    assert response.status_code == 400
    assert not MatchResult.objects.filter(match=match).exists()


def test_garbage_in_a_cell_is_refused_not_a_500(client, organizer, match):
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    data = _form(match, [(WIN, {})])
    data["d0-away-scope"] = "tre"
    response = client.post(url, data)
    assert response.status_code == 400
    assert not MatchResult.objects.filter(match=match).exists()


@pytest.mark.parametrize("cell", ["²", "-²", "99999999999999999999999", "40000"])
def test_odd_figures_in_a_cell_are_refused_not_a_500(client, organizer, match, cell):
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    data = _form(match, [(WIN, {})])
    data["d0-away-scope"] = cell
    response = client.post(url, data)
    assert response.status_code == 400
    assert not MatchResult.objects.filter(match=match).exists()


def test_check_only_validates_without_saving(client, organizer, match):
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    response = client.post(
        url, _form(match, [(WIN, {"scope": 2})], action="check"), HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code == 200 and "msg-success" in html and "<html" not in html
    assert "11" in html
    assert not MatchResult.objects.filter(match=match).exists()
    assert not ChangeLog.objects.filter(match=match).exists()


def test_check_only_leaves_no_line_in_the_log_and_a_save_leaves_one(
    client, organizer, match, caplog, django_capture_on_commit_callbacks
):
    """The form checks itself as it is typed; a check is rolled back, so the operators' log
    must not say a result was entered (it did, when Save followed a change within 400 ms)."""
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    caplog.set_level(logging.INFO, logger="tournaments.services.changelog")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            url, _form(match, [(WIN, {"scope": 2})], action="check"), HTTP_HX_REQUEST="true"
        )
    assert "result.entered" not in caplog.text
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url, _form(match, [(WIN, {"scope": 2})])).status_code == 302
    assert caplog.text.count("result.entered") == 1


def test_valid_result_is_saved_logged_and_shown(client, organizer, match):
    client.force_login(organizer)
    tournament = match.round.stage.tournament
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    response = client.post(url, _form(match, [(WIN, {"scope": 2})]))
    assert response.status_code == 302
    assert MatchResult.objects.filter(match=match).count() == 2
    entry = ChangeLog.objects.filter(match=match).latest("id")
    assert entry.user == organizer
    # the form reloads with the stored deal, ready for a correction
    form = client.get(url).content.decode()
    assert 'name="d0-home-scope" value="7"' in form
    # correcting it replaces the result cleanly (naming the version it corrects, with a reason)
    assert 'name="based_on" value="1"' in form
    data = _form(match, [(WIN, {"scope": 4})])
    data.update(based_on="1", reason="scope miscounted")
    response = client.post(url, data)
    assert response.status_code == 302
    assert [d.points for d in deals_of_match(match)] == [(11, 4)]
    away = MatchResult.objects.get(match=match, line=match.away)
    assert away.points == 4


def test_a_records_deals_show_in_order_although_its_void_deals_left_gaps(client, organizer, match):
    """A record's deals keep their numbers in the record, which skip its void deals: the form
    showed a deal in the row of its number, and a last deal past the rows was left out."""
    from tests.tournaments.helpers import deals
    from tournaments.services import results

    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    version = results.in_force(match)
    for stored, number in zip(version.sheet["deals"], (0, 2, 4), strict=True):
        stored["number"] = number
    version.save(update_fields=["sheet"])
    client.force_login(organizer)
    html = client.get(reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk]))
    html = html.content.decode()
    for row, (home, away) in enumerate([(5, 2), (3, 4), (4, 1)]):
        assert f'name="d{row}-home-scope" value="{home}"' in html
        assert f'name="d{row}-away-scope" value="{away}"' in html


def test_timeout_entered_on_the_desk(client, organizer, match):
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    data = _form(
        match,
        [({}, {"scope": 2, "carte": 1, "denari": 1, "settebello": 1, "primiera": 1})],
        outcome="timeout",
        offender="home",
    )
    data["d0-penalty"] = "on"
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    match.refresh_from_db()
    assert match.outcome == "timeout" and match.offender_id == match.home_id


def test_print_round(client, organizer, match):
    client.force_login(organizer)
    url = reverse("desk:print", args=[match.round.stage.tournament.slug, match.round_id])
    html = client.get(url).content.decode()
    assert "print.css" in html and "score-sheet" in html and "table-card" in html
    assert match.home.name in html


def test_close_stage_seeds_the_knockout(client, organizer, tournament):
    from tests.pages.factories import play_stage

    client.force_login(organizer)
    rr = tournament.stages.get(order=1)
    close = reverse("desk:close", args=[tournament.slug, rr.pk])
    response = client.post(close, {"per_group": "2", "confirm": "1"}, follow=True)
    assert "msg-error" in response.content.decode()  # results are missing: refused
    play_stage(rr)
    response = client.post(close, {"per_group": "2", "confirm": "1"}, follow=True)
    assert "msg-success" in response.content.decode()
    ko = tournament.stages.get(kind=Stage.Kind.KNOCKOUT)
    assert Match.objects.filter(round__stage=ko).exists()
    rr.refresh_from_db()
    assert rr.status == Stage.Status.CLOSED


def test_generate_rounds_from_the_desk(client, organizer, tournament):
    client.force_login(organizer)
    stage = Stage.objects.create(
        tournament=tournament, order=3, name="Extra", kind=Stage.Kind.ROUND_ROBIN
    )
    url = reverse("desk:generate", args=[tournament.slug, stage.pk])
    response = client.post(url, {"groups": "1"}, follow=True)
    assert "msg-success" in response.content.decode()
    assert Match.objects.filter(round__stage=stage).count() == 6
    assert client.get(url).status_code == 405


def test_result_on_the_desk_appears_in_public_standings(client, organizer, match):
    tournament = match.round.stage.tournament
    public_url = reverse("public:group", args=[tournament.slug, match.group_id])
    before = client.get(public_url).content.decode()
    assert '<td class="num strong">18</td>' not in before
    client.force_login(organizer)
    client.post(reverse("desk:match", args=[tournament.slug, match.pk]), _form(match, [(WIN, {})]))
    client.logout()
    after = client.get(public_url).content.decode()
    assert '<td class="num strong">18</td>' in after  # 11–0 on the 11-point table: 18 VP


def test_organizer_logs_in_on_the_desk_page(client, tournament, organizer):
    url = reverse("desk:tournament", args=[tournament.slug])
    response = client.post(
        reverse("desk:login"),
        {"username": "organizzatore", "password": "x-pass-12345", "next": url},
    )
    assert response.status_code == 302 and response["Location"] == url
    assert client.get(url).status_code == 200


def test_desk_shows_submissions_needing_attention(client, organizer, match):
    from games.models import Submission

    Submission.objects.create(
        match=match, version=1, document={"schema": "x"}, content_hash="a" * 64,
        state=Submission.State.REJECTED, error_reason="deal 2, play 14: 8S must take the 8C",
    )  # fmt: skip
    client.force_login(organizer)
    tournament = match.round.stage.tournament
    desk = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert "badge-rejected" in desk and "8S must take" in desk
    page = client.get(reverse("desk:match", args=[tournament.slug, match.pk])).content.decode()
    assert "badge-rejected" in page


def test_scopa_15_form_uses_the_engine_categories(client, tournament, organizer, match):
    tournament.variant = "scopa-15"
    tournament.save(update_fields=["variant"])
    client.force_login(organizer)
    html = client.get(reverse("desk:match", args=[tournament.slug, match.pk])).content.decode()
    assert 'name="d0-home-sette"' in html and 'name="d0-away-poche_carte"' in html
    assert 'name="d0-home-primiera"' not in html


def test_first_stage_bracket_from_seeds(client, organizer, tournament):
    client.force_login(organizer)
    Stage.objects.filter(tournament=tournament).delete()
    stage = Stage.objects.create(
        tournament=tournament, order=1, name="Coppa", kind=Stage.Kind.KNOCKOUT
    )
    html = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert reverse("desk:generate", args=[tournament.slug, stage.pk]) in html
    response = client.post(reverse("desk:generate", args=[tournament.slug, stage.pk]), follow=True)
    assert "msg-success" in response.content.decode()
    assert Match.objects.filter(round__stage=stage).count() == 3  # 4 lines: 2 semis, final


def test_time_limited_match_ended_by_time_on_the_desk(client, db):
    """Valliadi (21 points within an hour): when time runs out the line ahead wins, below 21."""
    from tests.tournaments.conftest import RR, make_tournament
    from tournaments.services import schedule

    tournament = make_tournament("valliadi-21-un-ora", n_lines=2, stages=[RR], seats_per_line=1)
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    match = Match.objects.get(round__stage=stage)
    user = User.objects.create_user("valliadi", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    assert 'name="time_expired"' in client.get(url).content.decode()
    data = _form(match, [(WIN, {"scope": 4}), ({"scope": 2}, {"scope": 1})])  # 13-5
    assert client.post(url, data).status_code == 400  # nobody reached 21
    assert not MatchResult.objects.filter(match=match).exists()
    response = client.post(url, {**data, "time_expired": "1"})
    assert response.status_code == 302
    home = MatchResult.objects.get(match=match, line=match.home)
    assert (home.points, home.won, home.mp) == (13, True, 8)
    assert 'name="time_expired" value="1" checked' in client.get(url).content.decode()


@pytest.mark.parametrize("kept", [True, False], ids=["kept", "version-without-it"])
def test_a_knockout_decided_by_the_last_capture_can_be_corrected_as_shown(client, db, kept):
    """The last capture of a level third tie-break deal decides the match: the form shows it
    again (as the version kept it or, for a version made before sheets kept it, from the loser,
    who made it), so re-saving the shown result is accepted, not refused."""
    from tests.tournaments.conftest import KO, make_tournament
    from tests.tournaments.helpers import deal, deals
    from tournaments.services import results, schedule

    tournament = make_tournament("scopa-tre-smazzate", n_lines=2, stages=[KO])
    stage = tournament.stages.get()
    schedule.generate_knockout(stage, [e.line for e in tournament.entries.order_by("seed")])
    match = Match.objects.get(round__stage=stage, is_third_place=False)
    level = [deal(1, 1, tiebreak=True) for _ in range(3)]
    level[-1]["last_capture"] = 0  # the home line captured last: it loses
    results.enter_result(match, [*deals((2, 2), (1, 1), (3, 3)), *level])
    match.refresh_from_db()
    assert match.winner_id == match.away_id
    if not kept:
        version = results.in_force(match)
        for stored in version.sheet["deals"]:
            stored.pop("last_capture", None)
        version.save(update_fields=["sheet"])
    user = User.objects.create_user("eliminazione", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    html = client.get(url).content.decode()
    assert '<option value="0" selected>' in html
    data = {"rows": "6", "outcome": "completed", "offender": "", "action": "save", "based_on": "1"}
    for i, (home, away) in enumerate([(2, 2), (1, 1), (3, 3), (1, 1), (1, 1), (1, 1)]):
        data[f"d{i}-home-scope"], data[f"d{i}-away-scope"] = str(home), str(away)
        if i >= 3:
            data[f"d{i}-tiebreak"] = "on"
    data["d5-last_capture"] = "0"
    if not kept:  # the sheet gains the last capture: a correction, which says why
        data["reason"] = "ultima presa annotata"
    assert client.post(url, data).status_code == 302
    match.refresh_from_db()
    assert match.winner_id == match.away_id


def test_deleting_a_result_on_the_desk_needs_a_reason_and_is_logged(client, organizer, match):
    client.force_login(organizer)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    assert client.post(url, _form(match, [(WIN, {"scope": 2})])).status_code == 302
    delete = {"action": "delete", "based_on": "1", "confirm_delete": "1"}
    refused = client.post(url, {**delete, "reason": ""})
    match.refresh_from_db()
    assert refused.status_code == 400 and match.status == Match.Status.DONE
    client.post(url, {**delete, "reason": "wrong table"})
    match.refresh_from_db()
    assert match.status == Match.Status.SCHEDULED
    assert not MatchResult.objects.filter(match=match).exists()
    assert ChangeLog.objects.filter(match=match, action="result.deleted", user=organizer).exists()


def test_a_stage_without_results_is_drawn_again_only_when_confirmed(client, organizer, tournament):
    """Drawing a stage again deletes its matches: the desk offers it while no result is in, and
    the scheduler refuses it unless the organizer confirms (``replace``)."""
    client.force_login(organizer)
    stage = Stage.objects.create(
        tournament=tournament, order=3, name="Extra", kind=Stage.Kind.ROUND_ROBIN
    )
    url = reverse("desk:generate", args=[tournament.slug, stage.pk])
    client.post(url, {"groups": "1"})
    before = set(Match.objects.filter(round__stage=stage).values_list("pk", flat=True))
    desk = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert 'name="replace"' in desk
    refused = client.post(url, {"groups": "2"}, follow=True).content.decode()
    assert "msg-error" in refused
    assert set(Match.objects.filter(round__stage=stage).values_list("pk", flat=True)) == before
    client.post(url, {"groups": "2", "replace": "1", "confirm": "1"})
    after = set(Match.objects.filter(round__stage=stage).values_list("pk", flat=True))
    assert stage.groups.count() == 2 and after and not before & after
    assert ChangeLog.objects.filter(action="groups.created", user=organizer).exists()
