"""One referee for every sheet: the desk, the admin and the API refuse hand-entered deals that
cannot happen (nothing saved, a sentence saying why), and judge the match with the engine's one
match-end rule, timed knock-out ties included."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scopa import simulate_match, verify_document
from scopa.variants import VARIANTS
from tests.tournaments.conftest import KO, RR, make_tournament
from tournaments.algorithms import standings as standings_algo
from tournaments.algorithms import vp as vp_algo
from tournaments.exceptions import ResultError
from tournaments.models import (
    ChangeLog,
    Match,
    MatchResult,
    Outcome,
    TieBreak,
    Tournament,
    Variant,
)
from tournaments.services import results, schedule

from .helpers import deal, deals

pytestmark = pytest.mark.django_db

PRESETS = {
    "scopa": "scopa-classica-11",
    "scopa-d-assi": "scopa-d-assi",
    "scopa-15": "scopa-15-a-31",
}


def first_match(preset, stage=RR, options=None, **kwargs):
    tournament = make_tournament(preset, n_lines=2, stages=[stage], **kwargs)
    if options is not None:
        Tournament.objects.filter(pk=tournament.pk).update(options=options)
    stage_row = tournament.stages.get()
    if stage is RR:
        schedule.create_groups(stage_row, 1)
        schedule.generate_round_robin(stage_row)
    else:
        schedule.generate_knockout(stage_row, [e.line for e in tournament.entries.order_by("seed")])
    return Match.objects.filter(round__stage=stage_row).order_by("bracket_position").first()


def nothing_stored(match):
    return (
        len(results.deals_of_match(match)),
        MatchResult.objects.filter(match=match).count(),
        ChangeLog.objects.filter(match=match, action__startswith="result").count(),
    ) == (0, 0, 0)


def sheet(home, away):
    return [
        {
            "points": [sum(home.values()), sum(away.values())],
            "breakdown": [home, away],
        }
    ]


# (variant, options, home breakdown, away breakdown, words of the Italian sentence)
IMPOSSIBLE = [
    ("scopa", None, {"carte": 1, "scope": 5}, {"carte": 1}, "Carte: in una smazzata"),
    ("scopa", None, {"denari": 1}, {"denari": 1}, "Denari: in una smazzata"),
    ("scopa", None, {"settebello": 1}, {"settebello": 1}, "Settebello: in una smazzata"),
    ("scopa", None, {"primiera": 1}, {"primiera": 1}, "Primiera: in una smazzata"),
    ("scopa", None, {"carte": 5, "scope": 6}, {}, "Carte: 5 punti, ma una smazzata ne dà"),
    ("scopa", None, {"denari": 3, "scope": 8}, {}, "Denari: 3 punti"),
    ("scopa", None, {"scope": 40}, {}, "40 scope in una smazzata non sono possibili"),
    ("scopa", None, {"scope": 10}, {"scope": 8}, "10 e 8 scope nella stessa smazzata"),
    ("scopa", {"rebello": True}, {"rebello": 1}, {"rebello": 1}, "Rebello: in una smazzata"),
    ("scopa", {"napola": True}, {"napola": 3}, {"napola": 3}, "Napola: in una smazzata"),
    ("scopa", None, {"rebello": 1, "scope": 10}, {}, "non è un punto della variante Scopa"),
    ("scopa-d-assi", None, {"carte": 1}, {"carte": 1}, "Carte: in una smazzata"),
    ("scopa-d-assi", None, {"primiera": 2, "scope": 9}, {}, "Primiera: 2 punti"),
    ("scopa-15", None, {"sette": 1}, {"sette": 1}, "Sette: in una smazzata"),
    ("scopa-15", None, {"poche_carte": 2}, {"poche_carte": 2}, "Meno di 10 carte"),
    ("scopa-15", None, {"denari": 3, "scope": 9}, {}, "Denari: 3 punti"),
    ("scopa-15", None, {"scope": 15}, {}, "15 scope in una smazzata"),
    (
        "scopa-15",
        None,
        {"primiera": 1, "scope": 11},
        {},
        "non è un punto della variante Scopa a 15",
    ),
]


@pytest.mark.parametrize(("variant", "options", "home", "away", "words"), IMPOSSIBLE)
def test_impossible_sheets_are_refused_and_nothing_is_saved(variant, options, home, away, words):
    match = first_match(PRESETS[variant], options=options)
    with translation.override("it"), pytest.raises(ResultError) as refused:
        results.enter_result(match, sheet(home, away) + deals((11, 0), (11, 0)))
    assert words in str(refused.value)
    assert str(refused.value).startswith("Smazzata 1: ")
    match.refresh_from_db()
    assert match.status == Match.Status.SCHEDULED and nothing_stored(match)


def test_a_possible_sheet_of_every_category_is_accepted():
    match = first_match("scopa-15-a-31")
    home = {"scope": 3, "denari": 2, "settebello": 1, "sette": 2, "carte": 1, "poche_carte": 2}
    results.enter_result(match, sheet(home, {"scope": 1}) + deals((5, 2), (11, 3), (6, 0)))
    match.refresh_from_db()
    assert match.winner_id == match.home_id


def test_the_penalty_deal_may_split_a_category_point_by_point():
    """An interrupted deal: the offender's secured napola (3) stays, the loose 4th denaro goes to
    the opponent, who also gets the extra scopa."""
    match = first_match("scopa-classica-11", options={"napola": True})
    deals_ = [
        *deals((4, 2)),
        {
            "points": [3, 3],
            "breakdown": [{"napola": 3}, {"napola": 1, "scope": 1, "denari": 1}],
            "penalty": True,
        },
    ]
    results.enter_result(match, deals_, outcome=Outcome.ABANDON, offender=match.home)
    match.refresh_from_db()
    assert match.winner_id == match.away_id


def test_an_impossible_sheet_on_the_desk_is_refused_with_the_sentence(client):
    match = first_match("scopa-classica-11")
    tournament = match.round.stage.tournament
    user = User.objects.create_user("arbitro", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    data = {"rows": "2", "outcome": "completed", "offender": "", "action": "save", "based_on": ""}
    for category in ("carte", "denari", "settebello", "primiera"):
        data[f"d0-home-{category}"] = "1"
        data[f"d0-away-{category}"] = "1"
    data["d0-home-scope"] = "7"
    data["d1-home-scope"] = "1"
    with translation.override("it"):
        response = client.post(url, data, HTTP_ACCEPT_LANGUAGE="it")
    assert response.status_code == 400
    html = response.content.decode()
    assert escape("Carte: in una smazzata si assegna a una squadra sola") in html
    assert nothing_stored(match)


def test_timed_knockout_tie_goes_to_the_tie_break_deals_at_the_desk():
    """docs/match-record.md (seed 000, "Parità"): a knock-out tied when time runs out plays the
    tie-break deals, never further regular deals (the old desk asked for further deals instead)."""
    match = first_match("valliadi-21-un-ora", stage=KO)
    level = deals((5, 3), (2, 4))
    with translation.override("en"), pytest.raises(ResultError, match="tie-break deals"):
        results.enter_result(match, level, time_expired=True)
    results.enter_result(match, [*level, deal(1, 2, tiebreak=True)], time_expired=True)
    match.refresh_from_db()
    assert match.winner_id == match.away_id
    assert [d.is_tiebreak for d in results.deals_of_match(match)] == [False, False, True]
    assert match.has_tiebreak


def test_timed_group_tie_still_plays_on():
    match = first_match("valliadi-21-un-ora")
    level = deals((5, 3), (2, 4))
    with pytest.raises(ResultError):
        results.enter_result(match, level, time_expired=True)
    with pytest.raises(ResultError):  # no tie-break deals outside a knock-out
        results.enter_result(match, [*level, deal(1, 2, tiebreak=True)], time_expired=True)
    results.enter_result(match, [*level, deal(1, 2)], time_expired=True)
    match.refresh_from_db()
    assert match.winner_id == match.away_id


# --------------------------------------------------------------------------- property


def _sheet_from_verdict(verdict):
    """The deals an organizer would copy from a verified record's score sheet."""
    rows = []
    for entry in verdict["deals"]:
        if entry.get("void"):
            continue
        rows.append(
            {
                "points": list(entry["points"]),
                "breakdown": [{k: v for k, v in side.items() if v} for side in entry["breakdown"]],
                "tiebreak": entry["tiebreak"],
                "penalty": bool(entry.get("penalty")),
            }
        )
    if verdict["end"]["reason"] == "tiebreak_last_capture":
        rows[-1]["last_capture"] = 1 - verdict["winner"]  # the line that made it lost
    return rows


@pytest.fixture(params=[(v, kind) for v in PRESETS for kind in ("group", "knockout")])
def referee_match(request):
    variant, kind = request.param
    return first_match(PRESETS[variant], stage=RR if kind == "group" else KO)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 100_000),
    ending=st.sampled_from(["completed", "completed", "timeout", "abandon"]),
    offender_seat=st.integers(0, 1),
    stop=st.tuples(st.integers(0, 3), st.integers(0, 35)),
)
def test_property_a_verified_records_sheet_is_accepted_and_decides_alike(
    referee_match, seed, ending, offender_seat, stop
):
    """For any simulated legal record, the sheet derived from its verdict passes the hand-entry
    referee and gives the same winner, totals, margin and outcome through ``decide``."""
    match = referee_match
    tournament = match.round.stage.tournament
    outcome = None
    if ending != "completed":
        outcome = {"kind": ending, "seat": offender_seat, "deal": stop[0], "play": stop[1]}
    document = simulate_match(
        variant=tournament.variant,
        end=tournament.match_end(),
        knockout=match.round.stage.is_knockout,
        seed=seed,
        outcome=outcome,
    )
    verdict = verify_document(document)
    assert verdict["valid"], verdict["errors"]
    assume(verdict["end"]["reason"] != "no_capture")  # a sheet does not say who captured
    from_record = results.decision_from_verdict(match, verdict)
    by_hand = results.decide(
        match,
        results.parse_deals(_sheet_from_verdict(verdict)),
        outcome=from_record.outcome,
        offender_side=from_record.offender_side,
    )
    assert by_hand.winner_side == from_record.winner_side
    assert by_hand.totals == from_record.totals
    assert by_hand.margin == from_record.margin
    assert by_hand.outcome == from_record.outcome


# --------------------------------------------------------------------------- registries


def test_model_choices_are_the_registries():
    assert Variant.values == list(VARIANTS)
    with translation.override("it"):
        assert [str(label) for label in Variant.labels] == [v.name.it for v in VARIANTS.values()]
    with translation.override("en"):
        assert [str(label) for label in Variant.labels] == [v.name.en for v in VARIANTS.values()]
    assert TieBreak.values == [str(key) for key in standings_algo.TIEBREAKS]
    assert set(standings_algo.TIEBREAKS) == set(standings_algo.TieBreak)
    assert Outcome.values == [str(o) for o in vp_algo.Outcome]
    assert set(vp_algo.OUTCOME_LABELS) == set(vp_algo.Outcome)
    from ratings.algorithms import rating as rating_algo
    from ratings.models import Pool

    assert Pool.values == [str(p) for p in rating_algo.Pool]
    assert set(rating_algo.POOL_LABELS) == set(rating_algo.Pool)
    with translation.override("it"):
        assert dict(TieBreak.choices)["mp"] == "Totale MP"
        assert dict(Outcome.choices)["forfeit"] == "Forfait"


def test_match_page_shows_only_the_variants_options_and_the_time_limit(client):
    match = first_match("scopa-15-a-31", options={"rebello": True, "forced_capture": False})
    tournament = match.round.stage.tournament
    with translation.override("it"):
        html = client.get(
            reverse("public:match", args=[tournament.slug, match.pk]), HTTP_ACCEPT_LANGUAGE="it"
        ).content.decode()
    assert "Rebello" not in html and "Primiera" not in html
    assert "Presa obbligatoria" in html
    timed = first_match("valliadi-21-un-ora", name="Valliadi")
    tournament = timed.round.stage.tournament
    html = client.get(reverse("public:match", args=[tournament.slug, timed.pk])).content.decode()
    assert "60 min" in html
