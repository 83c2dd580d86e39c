"""Penalties: kept apart from result versions, so they outlive a corrected result; a forfeit is
a result written by the results service; shown in the standings, on the pages, in the export."""

import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.pages.factories import build_tournament, winning_deals
from tournaments.exceptions import PenaltyError
from tournaments.models import Match, Outcome, Penalty, PenaltyRule, Role, TournamentRole
from tournaments.services import penalties, results
from tournaments.services.export import build_document, dumps
from tournaments.services.importer import import_document
from tournaments.services.standings import stage_standings

pytestmark = pytest.mark.django_db


def _one_match(slug):
    tournament = build_tournament(2, slug=slug, knockout=False, play=False)
    match = Match.objects.get(round__stage__tournament=tournament)
    return tournament, match


def _vp(tournament):
    ((_group, rows),) = stage_standings(tournament.stages.get(order=1))
    return {row.line.pk: (row.vp, row.penalty) for row in rows}


def test_a_penalty_outlives_a_correction_of_the_result():
    tournament, match = _one_match("ritardo")
    home, away = match.home_id, match.away_id
    # 11-0 for home: margin 11, the 11-point table's 10–11 row gives 18-2 VP
    results.enter_result(match, winning_deals(0, 0))
    late = penalties.add_rule(tournament, label="Ritardo 5-10 minuti", kind="deduction", vp=3)
    penalties.apply_penalty(match, home, late.pk, reason="arrivata 7 minuti dopo l'appello")
    assert _vp(tournament) == {home: (18 - 3, 3), away: (2, 0)}
    # corrected: away won 11-5, margin 6, the 6–7 row gives 16-4; the 3 VP still come off
    results.enter_result(match, winning_deals(1, 5), based_on=1, reason="referto corretto")
    assert _vp(tournament) == {home: (4 - 3, 3), away: (16, 0)}
    assert Penalty.objects.get(match=match).reason == "arrivata 7 minuti dopo l'appello"

    # the export carries the table and the penalty; the import gives the same bytes back
    first = dumps(build_document(tournament))
    doc = json.loads(first)
    assert doc["penalty_table"] == [{"label": "Ritardo 5-10 minuti", "kind": "deduction", "vp": 3}]
    (rnd,) = doc["stages"][0]["rounds"]
    assert rnd["matches"][0]["penalties"][0]["vp"] == 3
    assert doc["stages"][0]["groups"][0]["standings"][1]["penalty"] == 3
    copy = import_document(json.loads(first), slug="ritardo-copia")
    again = json.loads(dumps(build_document(copy)))
    assert again["stages"] == doc["stages"] and again["penalty_table"] == doc["penalty_table"]


def test_a_no_show_is_a_forfeit_written_as_a_result():
    tournament, match = _one_match("assente")
    no_show = penalties.add_rule(tournament, label="Mancata presentazione", kind="forfeit")
    penalties.apply_penalty(match, match.away_id, no_show.pk, reason="non si è presentata")
    match.refresh_from_db()
    assert match.outcome == Outcome.FORFEIT and match.offender_id == match.away_id
    assert results.in_force(match).reason == "non si è presentata"
    assert Penalty.objects.get(match=match).kind == PenaltyRule.Kind.FORFEIT


def test_a_penalty_needs_a_reason_a_line_of_the_match_and_a_rule_of_the_table():
    tournament, match = _one_match("motivo")
    warning = penalties.add_rule(tournament, label="Ammonizione", kind="warning", vp=9)
    assert warning.vp == 0  # only a deduction takes VP off
    with pytest.raises(PenaltyError):
        penalties.apply_penalty(match, match.home_id, warning.pk, reason="  ")
    with pytest.raises(PenaltyError):
        penalties.apply_penalty(match, 10**9, warning.pk, reason="x")
    with pytest.raises(PenaltyError):
        penalties.add_rule(tournament, label="Penalità", kind="deduction", vp=0)
    assert not Penalty.objects.exists()


def test_the_referee_gives_a_penalty_on_the_desk_and_the_pages_show_it(client):
    tournament, match = _one_match("arbitro")
    results.enter_result(match, winning_deals(0, 0))
    rule = penalties.add_rule(tournament, label="Ritardo", kind="deduction", vp=2)
    referee = User.objects.create_user("arbitro-pen", password="x-pass-12345")
    TournamentRole.objects.create(tournament=tournament, user=referee, role=Role.REFEREE)
    client.force_login(referee)
    page = reverse("desk:match", args=[tournament.slug, match.pk])
    assert 'action="' + reverse("desk:give-penalty", args=[tournament.slug, match.pk]) in (
        client.get(page).content.decode()
    )
    client.post(
        reverse("desk:give-penalty", args=[tournament.slug, match.pk]),
        {"line": match.home_id, "rule": rule.pk, "reason": "sette minuti di ritardo"},
    )
    penalty = Penalty.objects.get(match=match)
    assert "sette minuti di ritardo" in client.get(page).content.decode()
    public = client.get(reverse("public:match", args=[tournament.slug, match.pk]))
    assert "sette minuti di ritardo" in public.content.decode()
    client.post(reverse("desk:withdraw-penalty", args=[tournament.slug, match.pk, penalty.pk]))
    assert not Penalty.objects.exists()
