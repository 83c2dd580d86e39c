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
