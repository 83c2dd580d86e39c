"""A day's stage sequence: add, edit, reorder and remove the stages not started; presets of the
usual days; the ranking and the qualification said in words."""

import pytest
from django.utils import translation
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tournaments.conftest import make_tournament
from tournaments.exceptions import StageError, StageStarted
from tournaments.models import ChangeLog, Stage
from tournaments.services import pairing, stages
from tournaments.services.stages import DayShape

pytestmark = pytest.mark.django_db


def _day(n_lines=8, preset="open", **shape):
    tournament = make_tournament(n_lines=n_lines)
    for fields in stages.day_stages(preset, DayShape(**shape)):
        stages.add_stage(tournament, **fields)
    return tournament


def _kinds(tournament):
    return list(
        Stage.objects.filter(tournament=tournament).order_by("order").values_list("kind", "order")
    )


def test_open_day_preset_is_mitchell_danish_knockout_with_carry_over():
    tournament = _day(mitchell_rounds=3, danish_rounds=4, knockout=16)
    assert _kinds(tournament) == [("mitchell", 1), ("danish", 2), ("knockout", 3)]
    mitchell, danish, knockout = Stage.objects.filter(tournament=tournament).order_by("order")
    assert (mitchell.rounds_planned, danish.rounds_planned) == (3, 4)
    assert danish.carry_over and danish.advance_count == 16
    assert knockout.third_place_match


def test_add_in_the_middle_then_move_and_remove_keep_orders_without_gaps():
    tournament = _day()
    swiss = stages.add_stage(tournament, kind=Stage.Kind.SWISS, rounds_planned=2, position=2)
    assert _kinds(tournament) == [("mitchell", 1), ("swiss", 2), ("danish", 3), ("knockout", 4)]
    stages.move_stage(swiss, 4)
    assert _kinds(tournament) == [("mitchell", 1), ("danish", 2), ("knockout", 3), ("swiss", 4)]
    stages.remove_stage(Stage.objects.get(pk=swiss.pk))
    assert _kinds(tournament) == [("mitchell", 1), ("danish", 2), ("knockout", 3)]
    kinds = set(ChangeLog.objects.filter(tournament=tournament).values_list("action", flat=True))
    assert {"stage.added", "stage.moved", "stage.removed"} <= kinds


def test_started_stage_refuses_edit_move_remove_and_nothing_goes_before_it():
    tournament = _day()
    mitchell = Stage.objects.get(tournament=tournament, order=1)
    pairing.pair_next_round(mitchell)
    with pytest.raises(StageStarted):
        stages.update_stage(mitchell, rounds_planned=2)
    with pytest.raises(StageStarted):
        stages.move_stage(mitchell, 2)
    with pytest.raises(StageStarted):
        stages.remove_stage(mitchell)
    danish = Stage.objects.get(tournament=tournament, order=2)
    with pytest.raises(StageError):
        stages.move_stage(danish, 1)
    with pytest.raises(StageError):
        stages.add_stage(tournament, kind=Stage.Kind.DANISH, position=1)
    # a stage not started is still edited
    stages.update_stage(danish, rounds_planned=5, advance_count=4)
    danish.refresh_from_db()
    assert (danish.rounds_planned, danish.advance_count) == (5, 4)
    assert _kinds(tournament)[0] == ("mitchell", 1)


def test_settings_that_do_not_hold_are_refused_with_a_message():
    tournament = _day()
    danish = Stage.objects.get(tournament=tournament, order=2)
    with pytest.raises(StageError, match="VP"):
        stages.update_stage(danish, bye_scoring=Stage.ByeScoring.SET_VP)
    with pytest.raises(StageError):
        stages.update_stage(danish, kind="monrad")
    with pytest.raises(StageError):
        stages.update_stage(danish, status="closed")
    danish.refresh_from_db()
    assert danish.bye_scoring == Stage.ByeScoring.FORFEIT_WIN


def test_words_say_the_combined_ranking_and_who_goes_on():
    with translation.override("en"):
        tournament = _day(knockout=8)
        _check_words(tournament)


def _check_words(tournament):
    day = list(Stage.objects.filter(tournament=tournament).order_by("order"))
    mitchell, danish, knockout = day
    assert "“Mitchell” + “Danish”" in stages.ranking_sentence(danish, day)
    assert stages.ranking_sentence(mitchell, day) == "Ranking of this stage's rounds only."
    said = stages.qualification_sentence(danish, day)
    assert "top 8" in said and "“Mitchell” + “Danish”" in said and "Knock-out" in said
    assert "carried over" in stages.qualification_sentence(mitchell, day)
    assert stages.qualification_sentence(knockout, day) == ""
    # the words and the pairing read the same chain
    assert [s.pk for s in pairing.chain_stages(danish)] == [mitchell.pk, danish.pk]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "move", "remove"]), st.integers(1, 6))))
def test_any_sequence_of_changes_keeps_orders_one_to_n(operations):
    tournament = make_tournament(n_lines=0)
    kinds = list(Stage.Kind)
    for index, (operation, n) in enumerate(operations):
        existing = list(Stage.objects.filter(tournament=tournament).order_by("order"))
        if operation == "add" or not existing:
            stages.add_stage(tournament, kind=kinds[index % len(kinds)], position=n)
        elif operation == "move":
            stages.move_stage(existing[n % len(existing)], n)
        else:
            stages.remove_stage(existing[n % len(existing)])
        orders = [order for _kind, order in _kinds(tournament)]
        assert orders == list(range(1, len(orders) + 1))


def test_places_kept_for_a_category_seed_the_knockout_and_show_on_the_ranking():
    from tests.pages.factories import play_stage
    from tournaments import selectors as sel
    from tournaments.models import Entry, Match
    from tournaments.services import schedule

    tournament = _day(n_lines=12, mitchell_rounds=1, danish_rounds=1, knockout=4)
    mitchell, danish, knockout = Stage.objects.filter(tournament=tournament).order_by("order")
    # typed as the desk's form gives it: the category as an organizer names it
    stages.update_stage(danish, category_places={"Donne": 1})
    danish.refresh_from_db()
    assert danish.category_places == {"women": 1}
    pairing.pair_next_round(mitchell)
    play_stage(mitchell)
    schedule.close_stage(mitchell)
    pairing.pair_next_round(danish)
    play_stage(danish)
    ranked = [row.line_id for row in pairing.open_standings(danish)]
    # the last line of the ranking is the only women's line: it takes the kept place
    woman = ranked[-1]
    Entry.objects.filter(tournament=tournament, line_id=woman).update(category="women")
    expected = [*ranked[:3], woman]

    ranking = sel.qualifying_ranking(danish, tournament)
    assert [row["line"].pk for row in ranking.rows if row["goes_on"]] == expected
    with translation.override("it"):
        words = stages.qualification_sentence(
            danish, list(Stage.objects.filter(pk__in=[danish.pk, knockout.pk]))
        )
    assert "1 posto" in words and "Femminile" in words

    schedule.close_stage(danish)
    first = Match.objects.filter(round__stage=knockout, round__number=1)
    drawn = {line for pair in first.values_list("home_id", "away_id") for line in pair}
    assert drawn == set(expected)

    # the export keeps the kept places, and its import gives them back
    from tournaments.services.export import build_document
    from tournaments.services.importer import import_document

    document = build_document(tournament)
    assert document["stages"][1]["pairing"]["category_places"] == {"women": 1}
    copy = import_document(document, slug="copia")
    assert copy.stages.get(kind=Stage.Kind.DANISH).category_places == {"women": 1}


def test_more_places_kept_than_lines_going_on_is_refused():
    tournament = _day(n_lines=8, mitchell_rounds=1, danish_rounds=1, knockout=4)
    danish = Stage.objects.get(tournament=tournament, kind=Stage.Kind.DANISH)
    with pytest.raises(StageError):
        stages.update_stage(danish, category_places={"women": 3, "over-63": 2})


def test_a_withdrawn_line_takes_no_place_kept_nor_any_other():
    from tests.pages.factories import play_stage
    from tournaments import selectors as sel
    from tournaments.models import Entry, Match
    from tournaments.services import lifecycle, schedule

    tournament = _day(n_lines=12, mitchell_rounds=1, danish_rounds=1, knockout=4)
    mitchell, danish, knockout = Stage.objects.filter(tournament=tournament).order_by("order")
    stages.update_stage(danish, category_places={"Donne": 1})
    danish.refresh_from_db()
    pairing.pair_next_round(mitchell)
    play_stage(mitchell)
    schedule.close_stage(mitchell)
    pairing.pair_next_round(danish)
    play_stage(danish)
    ranked = [row.line_id for row in pairing.open_standings(danish)]
    women = ranked[-2:]
    Entry.objects.filter(tournament=tournament, line_id__in=women).update(category="women")
    leader, gone_woman = ranked[0], women[0]
    for line_id in (leader, gone_woman):
        lifecycle.withdraw_line(tournament, Entry.objects.get(line_id=line_id).line)
    expected = [*ranked[1:4], women[1]]
    ranking = sel.qualifying_ranking(danish, tournament)
    assert [row["line"].pk for row in ranking.rows if row["goes_on"]] == expected
    schedule.close_stage(danish)
    first = Match.objects.filter(round__stage=knockout, round__number=1)
    assert {x for pair in first.values_list("home_id", "away_id") for x in pair} == set(expected)


@pytest.mark.parametrize(
    "places",
    [{"Donne": 1, "women": 1}, {"women": "2"}, {"women": 0}],
    ids=["same-category-twice", "text", "zero"],
)
def test_kept_places_that_do_not_hold_are_refused(places):
    tournament = _day(n_lines=8, mitchell_rounds=1, danish_rounds=1, knockout=4)
    danish = Stage.objects.get(tournament=tournament, kind=Stage.Kind.DANISH)
    with pytest.raises(StageError):
        stages.update_stage(danish, category_places=places)


def test_only_danish_swiss_and_mitchell_stages_keep_places():
    tournament = _day(n_lines=8, mitchell_rounds=1, danish_rounds=1, knockout=4)
    knockout = Stage.objects.get(tournament=tournament, kind=Stage.Kind.KNOCKOUT)
    with pytest.raises(StageError):
        stages.update_stage(knockout, category_places={"women": 1})


def test_a_file_with_kept_places_that_do_not_hold_is_refused():
    from tournaments.services.export import build_document
    from tournaments.services.importer import TournamentImportError, import_document

    tournament = _day(n_lines=8, mitchell_rounds=1, danish_rounds=1, knockout=4)
    danish = Stage.objects.get(tournament=tournament, kind=Stage.Kind.DANISH)
    stages.update_stage(danish, category_places={"women": 1})
    document = build_document(tournament)
    document["stages"][1]["pairing"]["category_places"] = {"women": "2"}
    with pytest.raises(TournamentImportError):
        import_document(document, slug="copia")


def test_only_mitchell_and_danish_stages_keep_clubs_apart():
    tournament = _day(n_lines=8, mitchell_rounds=1, danish_rounds=1, knockout=4)
    knockout = Stage.objects.get(tournament=tournament, kind=Stage.Kind.KNOCKOUT)
    with pytest.raises(StageError):
        stages.update_stage(knockout, keep_clubs_apart=True)
    danish = Stage.objects.get(tournament=tournament, kind=Stage.Kind.DANISH)
    stages.update_stage(danish, keep_clubs_apart=True)
    danish.refresh_from_db()
    assert danish.keep_clubs_apart
