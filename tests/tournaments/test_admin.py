"""The organizer admin: pages render, actions go through the services, refusals save nothing."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.tournaments.conftest import KO, RR, make_tournament
from tournaments.models import Match, Outcome, Stage, Tournament
from tournaments.services import schedule


@pytest.fixture
def organizer(db, client):
    user = get_user_model().objects.create_superuser("organizer", "o@example.org", "pw")
    client.force_login(user)
    return user


@pytest.fixture
def played_setup(organizer):
    tournament = make_tournament(n_lines=4, stages=[RR, KO])
    stage = tournament.stages.get(order=1)
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    return tournament, stage


@pytest.mark.django_db
def test_pages_render(client, played_setup):
    tournament, stage = played_setup
    match = Match.objects.filter(round__stage=stage).first()
    for url in [
        reverse("admin:tournaments_tournament_changelist"),
        reverse("admin:tournaments_tournament_change", args=[tournament.pk]),
        reverse("admin:tournaments_match_changelist"),
        reverse("admin:tournaments_match_change", args=[match.pk]),
        reverse("admin:tournaments_stage_changelist"),
        reverse("admin:tournaments_line_changelist"),
        reverse("admin:tournaments_vptable_changelist"),
        reverse("admin:tournaments_changelog_changelist"),
        reverse("admin:tournaments_group_changelist"),
    ]:
        response = client.get(url)
        assert response.status_code == 200, url


@pytest.mark.django_db
def test_change_list_counts(client, played_setup):
    from tournaments.admin import StageAdmin, TournamentAdmin

    _tournament, stage = played_setup
    request = client.get("/").wsgi_request
    from django.contrib.admin import site

    row = StageAdmin(Stage, site).get_queryset(request).get(pk=stage.pk)
    assert (row.n_groups, row.n_matches) == (1, 6)
    assert TournamentAdmin(Tournament, site).get_queryset(request).get().n_entries == 4


FORMSET_KEYS = ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS", "MAX_NUM_FORMS")


@pytest.mark.django_db
def test_the_lines_of_a_played_match_cannot_be_swapped_in_the_admin(client, played_setup):
    """Its results belong to its lines: changing one would leave a result of a line that no
    longer plays the match (standings would count it). Delete the result first."""
    from tests.tournaments.helpers import deals
    from tournaments.models import MatchResult
    from tournaments.services import results

    tournament, stage = played_setup
    match = Match.objects.filter(round__stage=stage).exclude(outcome=Outcome.BYE).first()
    results.enter_result(match, deals((4, 1), (3, 3), (5, 0)))
    other = tournament.entries.exclude(line__in=[match.home_id, match.away_id]).first().line
    url = reverse("admin:tournaments_match_change", args=[match.pk])
    page = client.get(url).content.decode()
    assert 'name="home"' not in page and 'name="away"' not in page
    client.post(
        url,
        {
            "round": match.round_id,
            "group": match.group_id or "",
            "home": other.pk,
            "away": match.away_id,
            "table_number": match.table_number or 1,
            "bracket_position": match.bracket_position or 0,
            **{f"{inline}-{key}": "0" for inline in ("results", "deals") for key in FORMSET_KEYS},
        },
    )
    match.refresh_from_db()
    lines = {match.home_id, match.away_id}
    assert other.pk not in lines
    assert set(MatchResult.objects.filter(match=match).values_list("line_id", flat=True)) == lines


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tiebreaks", 5),
        ("tiebreaks", {"mp": 1}),
        ("options", {"napola": "sì"}),
        ("options", {"bogus": True}),
        ("options", ["napola"]),
    ],
)
def test_a_tournament_with_unusable_rules_is_refused_by_its_form(field, value):
    """The admin's change form runs Tournament.clean(): options the engine does not know, or
    tie-breaks that are not a list, are a field error (they were stored, or a TypeError)."""
    from django.core.exceptions import ValidationError

    tournament = make_tournament()
    setattr(tournament, field, value)
    with pytest.raises(ValidationError) as error:
        tournament.full_clean()
    assert field in error.value.message_dict
    Tournament.objects.filter(pk=tournament.pk).update(options={"napola": True})
    tournament.refresh_from_db()
    tournament.full_clean()


@pytest.mark.django_db
def test_the_admins_match_page_lists_the_deals_and_sends_results_to_the_desk(client, organizer):
    from tests.tournaments.helpers import deal, deals
    from tournaments.services import results

    tournament = make_tournament("scopa-tre-smazzate", n_lines=2, stages=[KO])
    stage = tournament.stages.get()
    schedule.generate_knockout(stage, [e.line for e in tournament.entries.order_by("seed")])
    match = Match.objects.get(round__stage=stage, is_third_place=False)
    level = [deal(1, 1, tiebreak=True) for _ in range(3)]
    level[-1]["last_capture"] = 1  # the away line captured last: the home line wins
    results.enter_result(match, [*deals((2, 2), (1, 1), (3, 3)), *level])
    # the match's own page lists the deals of the result in force, read from its version
    page = client.get(reverse("admin:tournaments_match_change", args=[match.pk])).content.decode()
    assert "1. 2 – 2<br>2. 1 – 1<br>3. 3 – 3<br>4. 1 – 1 (" in page
    assert "6. 1 – 1 (" in page
    # results are entered on the desk, the one place for them: the admin links there
    listing = client.get(reverse("admin:tournaments_match_changelist")).content.decode()
    assert reverse("desk:match", args=[tournament.slug, match.pk]) in listing
    assert "enter-result" not in listing and "delete_results" not in listing


def test_the_rule_options_help_text_speaks_to_organizers(organizer, client):
    """The help text said "Opzioni di regolamento di rules.md", a file of the code."""
    tournament = make_tournament(stages=[RR])
    page = client.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "rules.md" not in html
    assert "Opzioni di gioco" in html
