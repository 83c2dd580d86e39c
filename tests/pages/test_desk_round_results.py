"""A round's results typed from the slips in one desk page (issue 33): each table through the
desk's one way to write a result, together; refused tables kept typed with their reason while the
others are saved; a table saved meanwhile never overwritten; who may use the page."""

import re

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import gettext, override

from desk.forms import slip_deals
from tests.pages.factories import build_tournament, winning_deals
from tournaments.models import Match, ResultVersion, Role, Round, TournamentRole
from tournaments.services import results
from tournaments.signals import results_changed, results_written
from tournaments.sources import ResultSource

pytestmark = pytest.mark.django_db

CLASSIC = ["scope", "carte", "denari", "settebello", "primiera"]
# one deal to 11 as the slip's row reads: 7 scope and the four points, against 2 scope
HOME_WINS = "7 1 1 1 1   2 0 0 0 0"
AWAY_WINS = "0 0 0 0 0   7 1 1 1 1"


def test_a_slip_row_is_read_left_to_right_with_or_without_the_totals():
    plain = slip_deals(HOME_WINS, CLASSIC)
    with_totals = slip_deals("7 1 1 1 1 11 | 2 0 0 0 0 2", CLASSIC)
    expected = [
        {
            "points": [11, 2],
            "breakdown": [
                {"scope": 7, "carte": 1, "denari": 1, "settebello": 1, "primiera": 1},
                {"scope": 2},
            ],
        }
    ]
    assert plain == with_totals == expected
    two = slip_deals("3 1 0 1 0  1 0 1 0 1\n\n4 0 1 0 1 - 0 1 0 1 0\n", CLASSIC)
    assert [deal["points"] for deal in two] == [[5, 3], [6, 2]]
    # a typed total is passed on as typed: the service refuses one that does not add up
    assert slip_deals("7 1 1 1 1 12  2 0 0 0 0 2", CLASSIC)[0]["points"] == [12, 2]


@pytest.mark.parametrize(
    "typed", ["7 1 1 1 1 2 0 0 0", "7 1 1 1 1 2 0 0 0 x", "7 1 1 1 1 2 0 0 0 ²"]
)
def test_a_slip_row_that_cannot_be_read_is_refused_with_its_deal(typed):
    with pytest.raises(ValidationError) as refused:
        slip_deals("7 1 1 1 1 2 0 0 0 0\n" + typed, CLASSIC)
    assert "2" in refused.value.messages[0]  # the second deal


def _desk(client, tournament, role=None, name="segnapunti"):
    user = User.objects.create_user(name, password="x-pass-12345")
    if role is None:
        tournament.organizers.add(user)
    else:
        TournamentRole.objects.create(tournament=tournament, user=user, role=role)
    client.force_login(user)
    return user


def _first_round(tournament):
    return Round.objects.filter(stage__tournament=tournament).order_by("number").first()


def _tables(round_):
    return list(
        Match.objects.filter(round=round_, home__isnull=False, away__isnull=False).order_by(
            "table_number", "id"
        )
    )


def _page_data(page):
    """What the browser sends back from the page untouched: the hidden ``based_on`` fields."""
    data = {}
    for tag in re.findall(r'<input type="hidden"[^>]*>', page):
        name = re.search(r'name="(t\d+-based_on)"', tag)
        if name:
            value = re.search(r'value="([^"]*)"', tag)
            data[name.group(1)] = value.group(1) if value else ""
    return data


def _url(tournament, round_):
    return reverse("desk:round-results", args=[tournament.slug, round_.pk])


def test_every_slip_of_a_round_is_saved_as_the_desk_saves_one_and_announced_once(
    client, django_capture_on_commit_callbacks
):
    tournament = build_tournament(6, slug="foglietti", play=False, knockout=False)
    user = _desk(client, tournament, Role.SCORER)
    round_ = _first_round(tournament)
    url = _url(tournament, round_)
    page = client.get(url).content.decode()
    tables = _tables(round_)
    assert len(tables) == 3 and all(f'name="t{m.pk}-deals"' in page for m in tables)
    data = _page_data(page)
    assert data == {f"t{m.pk}-based_on": "" for m in tables}
    data.update({f"t{m.pk}-deals": HOME_WINS if i % 2 else AWAY_WINS for i, m in enumerate(tables)})
    written, changed = [], []
    results_written.connect(receiver := lambda **kw: written.append(kw["match_ids"]))
    results_changed.connect(receiver2 := lambda **kw: changed.append(kw["matches"]))
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(url, data)
    finally:
        results_written.disconnect(receiver)
        results_changed.disconnect(receiver2)
    assert response.status_code == 302 and response["Location"] == url
    assert len(written) == 1 and sorted(written[0]) == sorted(m.pk for m in tables)
    assert len(changed) == 1
    for i, match in enumerate(tables):
        match.refresh_from_db()
        version = results.in_force(match)
        assert match.status == Match.Status.DONE
        assert match.winner_id == (match.home_id if i % 2 else match.away_id)
        assert (version.number, version.source, version.author) == (1, ResultSource.DESK, user)
    after = client.get(url).content.decode()
    with override("it"):
        assert gettext("Every table of this round has its result.") in after
        assert "Salvati" in after  # the message names the tables saved


def test_a_refused_slip_stays_typed_with_its_reason_while_the_others_are_saved(client):
    tournament = build_tournament(6, slug="rifiuto", play=False, knockout=False)
    _desk(client, tournament)
    round_ = _first_round(tournament)
    url = _url(tournament, round_)
    data = _page_data(client.get(url).content.decode())
    first, second, third = _tables(round_)
    both_carte = "7 1 1 1 1   2 1 0 0 0"  # the carte to both lines: no deal gives that
    data.update(
        {
            f"t{first.pk}-deals": both_carte,
            f"t{second.pk}-deals": HOME_WINS,
            f"t{third.pk}-deals": "7 1 1 1",  # a slip row cut short
        }
    )
    response = client.post(url, data)
    assert response.status_code == 400
    page = response.content.decode()
    second.refresh_from_db()
    assert second.status == Match.Status.DONE
    assert not ResultVersion.objects.filter(match__in=[first, third]).exists()
    # the refused slips are still typed, each with its reason in its row
    assert re.search(rf'name="t{first.pk}-deals"[^>]*>{both_carte}</textarea>', page)
    assert re.search(rf'name="t{third.pk}-deals"[^>]*>7 1 1 1</textarea>', page)
    assert f'name="t{second.pk}-deals"' not in page  # saved: it leaves the page
    first_row = page[page.index(f'id="table-{first.pk}"') :].split("</tr>")[0]
    with override("it"):
        assert "Smazzata 1" in first_row and "carte" in first_row.lower()
    third_row = page[page.index(f'id="table-{third.pk}"') :].split("</tr>")[0]
    assert "field-errors" in third_row
    # which were saved, and which not, said at the top
    assert re.search(rf"Salvat\w+[^<]*{second.table_number}", page)
    assert "Non salvat" in page


def test_a_table_saved_meanwhile_is_never_overwritten(client):
    """The page was read before a result of table 1 came in (a phone, another scorer): the
    slip typed for it is refused as the one-match form refuses a stale save, the other saved."""
    tournament = build_tournament(6, slug="nel-frattempo", play=False, knockout=False)
    _desk(client, tournament)
    round_ = _first_round(tournament)
    url = _url(tournament, round_)
    data = _page_data(client.get(url).content.decode())
    first, second, _third = _tables(round_)
    results.save_result(first, winning_deals(0, 3), based_on="")
    data.update({f"t{first.pk}-deals": AWAY_WINS, f"t{second.pk}-deals": HOME_WINS})
    response = client.post(url, data)
    assert response.status_code == 409
    page = response.content.decode()
    first.refresh_from_db()
    assert first.winner_id == first.home_id  # the result saved meanwhile stands
    assert ResultVersion.objects.filter(match=first).count() == 1
    second.refresh_from_db()
    assert second.status == Match.Status.DONE
    row = page[page.index(f'id="table-{first.pk}"') :].split("</tr>")[0]
    assert "readonly" in row and AWAY_WINS in row  # kept, to compare; not sent again
    assert f'name="t{first.pk}-deals"' not in page
    assert reverse("desk:match", args=[tournament.slug, first.pk]) in row


def test_the_same_page_sent_twice_saves_each_result_once(client):
    tournament = build_tournament(4, slug="due-volte", play=False, knockout=False)
    _desk(client, tournament)
    round_ = _first_round(tournament)
    url = _url(tournament, round_)
    data = _page_data(client.get(url).content.decode())
    data.update({f"t{m.pk}-deals": HOME_WINS for m in _tables(round_)})
    assert client.post(url, data).status_code == 302
    assert client.post(url, data).status_code == 302  # the back button, a double click
    assert sorted(
        ResultVersion.objects.filter(match__round=round_).values_list("number", flat=True)
    ) == [1, 1]


def test_a_slip_without_the_version_it_was_read_at_is_refused(client):
    tournament = build_tournament(4, slug="senza-versione", play=False, knockout=False)
    _desk(client, tournament)
    round_ = _first_round(tournament)
    match = _tables(round_)[0]
    response = client.post(_url(tournament, round_), {f"t{match.pk}-deals": HOME_WINS})
    assert response.status_code == 400
    assert not ResultVersion.objects.filter(match=match).exists()


def test_the_time_limit_ends_a_match_short_of_the_target_only_when_ticked(client):
    tournament = build_tournament(4, slug="a-tempo", play=False, knockout=False)
    tournament.time_limit_s = 40 * 60
    tournament.save(update_fields=["time_limit_s"])
    _desk(client, tournament)
    round_ = _first_round(tournament)
    url = _url(tournament, round_)
    data = _page_data(client.get(url).content.decode())
    first, second = _tables(round_)
    short = "3 1 1 0 1   1 0 0 1 0"  # 6 – 2 after one deal, nobody at 11
    data.update({f"t{first.pk}-deals": short, f"t{second.pk}-deals": short})
    data[f"t{first.pk}-time"] = "1"
    response = client.post(url, data)
    assert response.status_code == 400  # the second is not over: the time box is not ticked
    first.refresh_from_db()
    assert first.winner_id == first.home_id
    assert not ResultVersion.objects.filter(match=second).exists()


def test_a_knock_out_round_is_left_to_the_match_page(client):
    tournament = build_tournament(4, slug="tabellone", play=True, knockout=True)
    _desk(client, tournament)
    from tournaments.models import Stage
    from tournaments.services import schedule

    rr, knockout = tournament.stages.order_by("order")
    schedule.close_stage(rr, per_group=4)
    round_ = Round.objects.filter(stage=knockout).order_by("number").first()
    match = _tables(round_)[0]
    url = _url(tournament, round_)
    assert knockout.kind == Stage.Kind.KNOCKOUT
    page = client.get(url).content.decode()
    assert "<textarea" not in page
    response = client.post(url, {f"t{match.pk}-deals": HOME_WINS, f"t{match.pk}-based_on": ""})
    assert response.status_code == 200
    assert not ResultVersion.objects.filter(match=match).exists()


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.SCORER, 302), (None, 302), (Role.REFEREE, 403), (Role.VIEWER, 403)],
)
def test_who_may_type_the_slips(client, role, status):
    """As the one-match form: organizers and scorers enter results; a referee decides them."""
    tournament = build_tournament(4, slug="chi", play=False, knockout=False)
    _desk(client, tournament, role)
    round_ = _first_round(tournament)
    match = _tables(round_)[0]
    url = _url(tournament, round_)
    assert client.get(url).status_code == (200 if status == 302 else 403)
    response = client.post(url, {f"t{match.pk}-deals": HOME_WINS, f"t{match.pk}-based_on": ""})
    assert response.status_code == status
    assert ResultVersion.objects.filter(match=match).exists() == (status == 302)


def test_the_page_passes_the_accessibility_checks_with_a_refused_slip(client):
    from tests.pages.test_accessibility import audit

    tournament = build_tournament(6, slug="accessibili", play=False, knockout=False)
    tournament.time_limit_s = 40 * 60
    tournament.save(update_fields=["time_limit_s"])
    _desk(client, tournament)
    round_ = _first_round(tournament)
    url = _url(tournament, round_)
    page = client.get(url).content.decode()
    assert audit(page) == []
    data = _page_data(page)
    data[f"t{_tables(round_)[0].pk}-deals"] = "7 1 1"
    assert audit(client.post(url, data).content.decode()) == []


def test_the_desk_links_each_round_to_its_slips_page_for_those_who_enter_results(client):
    tournament = build_tournament(4, slug="collegamento", play=False, knockout=False)
    round_ = _first_round(tournament)
    desk = reverse("desk:tournament", args=[tournament.slug])
    _desk(client, tournament, Role.REFEREE, name="arbitro")
    assert _url(tournament, round_) not in client.get(desk).content.decode()
    _desk(client, tournament, Role.SCORER)
    assert _url(tournament, round_) in client.get(desk).content.decode()


def test_the_service_refuses_a_match_of_another_round_and_saves_the_rest():
    from tournaments.services import round_results

    tournament = build_tournament(4, slug="altro-turno", play=False, knockout=False)
    first, second = Round.objects.filter(stage__tournament=tournament).order_by("number")[:2]
    here, elsewhere = _tables(first)[0], _tables(second)[0]
    deals = winning_deals(0, 2)
    outcomes = round_results.enter_round_results(
        first,
        [
            round_results.TableResult(elsewhere.pk, deals),
            round_results.TableResult(here.pk, deals),
        ],
        user=None,
    )
    assert [(o.saved, bool(o.refusal)) for o in outcomes] == [(False, True), (True, False)]
    assert not ResultVersion.objects.filter(match=elsewhere).exists()


def test_a_table_id_past_any_key_names_no_table_and_is_no_server_error(client):
    """A hand-made post naming a table by an id larger than a 64-bit key: SQLite (the embedded
    default) could not even compare it and answered 500."""
    tournament = build_tournament(4, slug="fuori-scala", play=False)
    _desk(client, tournament)
    round_ = _first_round(tournament)
    url = reverse("desk:round-results", args=[tournament.slug, round_.pk])
    response = client.post(url, {"t99999999999999999999999-deals": HOME_WINS})
    assert response.status_code < 500
    assert not Match.objects.filter(round=round_, status=Match.Status.DONE).exists()
