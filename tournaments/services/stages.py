"""A tournament's sequence of stages: add, edit, reorder and remove the stages not started.

The one writer of a stage's place and settings before it starts (the desk and the API call it);
once a stage has a round or is no longer pending, its kind and place are history and every
change is refused with a message. Stages are numbered 1, 2, … with no gap after each change, so
"the next stage" (which a closing stage seeds) is always the one right after.

Nothing here knows a stage kind by name beyond ``Stage.Kind`` and ``PAIRED_BY_ROUND``: a new kind
gets the same add/edit/move/remove for free.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from tournaments.exceptions import StageError, StageStarted
from tournaments.models import (
    PAIRED_BY_ROUND,
    Round,
    Stage,
    TieBreak,
    category_label,
    normalize_category,
)
from tournaments.services import changelog

logger = logging.getLogger(__name__)

# What an organizer may set on a stage not started (status and order have their own paths).
EDITABLE_FIELDS = (
    "name",
    "kind",
    "double_round_robin",
    "third_place_match",
    "rounds_planned",
    "first_round",
    "bye_scoring",
    "bye_vp",
    "arrow_switch",
    "keep_clubs_apart",
    "late_entry_until_round",
    "carry_over",
    "advance_count",
    "category_places",
    "stage_tiebreaks",
)


def has_started(stage: Stage) -> bool:
    """A stage with a round (or no longer pending) keeps its kind and place."""
    return stage.status != Stage.Status.PENDING or Round.objects.filter(stage=stage).exists()


def _refuse_started(stage: Stage, operation: str) -> None:
    if not has_started(stage):
        return
    messages = {
        "change": _("Stage “%(stage)s” has started: its settings can no longer be changed."),
        "move": _("Stage “%(stage)s” has started: it keeps its place in the day."),
        "remove": _("Stage “%(stage)s” has started: it can no longer be removed."),
    }
    raise StageStarted(messages[operation] % {"stage": stage.name})


def _locked_stages(tournament) -> list[Stage]:
    return list(
        Stage.objects.select_for_update().filter(tournament=tournament).order_by("order", "pk")
    )


def _last_started_index(stages: list[Stage]) -> int:
    """Index of the last started stage (-1 when none): nothing may go before it."""
    started = [i for i, stage in enumerate(stages) if has_started(stage)]
    return started[-1] if started else -1


def _renumber(stages: list[Stage]) -> None:
    """Give ``stages`` orders 1, 2, … in list order (two passes: the order is unique)."""
    if not stages:
        return
    top = max(stage.order for stage in stages) + len(stages) + 1
    for index, stage in enumerate(stages):
        Stage.objects.filter(pk=stage.pk).update(order=top + index)
    for index, stage in enumerate(stages, start=1):
        Stage.objects.filter(pk=stage.pk).update(order=index)
        stage.order = index


def _validated(stage: Stage) -> None:
    try:
        stage.full_clean(exclude=["tournament", "order"])
    except ValidationError as error:
        messages = [str(m) for msgs in error.message_dict.values() for m in msgs]
        raise StageError(" ".join(messages)) from error


def _category_places(value: Any) -> Any:
    """Places kept for categories with each category as the entries store it ("Donne" is
    "women"); anything else is left for the stage's validation to refuse."""
    if not isinstance(value, dict):
        return value or {}
    places: dict[str, Any] = {}
    for name, count in value.items():
        category = normalize_category(str(name))
        if category in places:
            raise StageError(
                _("“%(name)s” names a category already given a number of places.") % {"name": name}
            )
        places[category] = count
    return places


def _apply(stage: Stage, fields: dict[str, Any]) -> list[str]:
    unknown = sorted(set(fields) - set(EDITABLE_FIELDS))
    if unknown:
        raise StageError(_("Unknown stage settings: %(names)s") % {"names": ", ".join(unknown)})
    changed = []
    for name, value in fields.items():
        if name == "stage_tiebreaks":
            value = [str(TieBreak(v)) for v in value or []] if value else []
        if name == "category_places":
            value = _category_places(value)
        if getattr(stage, name) != value:
            setattr(stage, name, value)
            changed.append(name)
    if not stage.name and stage.kind in Stage.Kind.values:
        stage.name = str(Stage.Kind(stage.kind).label)
        changed.append("name")
    return sorted(set(changed))


@transaction.atomic
def add_stage(tournament, *, user=None, position: int | None = None, **fields) -> Stage:
    """Add a stage at ``position`` (1-based; default: last), after every started stage."""
    stages = _locked_stages(tournament)
    floor = _last_started_index(stages) + 1
    index = len(stages) if position is None else position - 1
    if index < floor:
        raise StageError(
            _("A new stage goes after the stages that have started (position %(n)d or later).")
            % {"n": floor + 1}
        )
    index = min(index, len(stages))
    top = Stage.objects.filter(tournament=tournament).aggregate(top=Max("order"))["top"] or 0
    stage = Stage(tournament=tournament, order=top + len(stages) + 1)
    _apply(stage, fields)
    _validated(stage)
    stage.save()
    stages.insert(index, stage)
    _renumber(stages)
    changelog.record(
        tournament,
        "stage.added",
        user=user,
        stage=stage.pk,
        stage_name=stage.name,
        kind=str(stage.kind),
        order=stage.order,
    )
    logger.info("tournament %s: stage %s added at %d", tournament.pk, stage.pk, stage.order)
    return stage


@transaction.atomic
def update_stage(stage: Stage, *, user=None, **fields) -> Stage:
    """Change the settings of a stage not started."""
    stage = Stage.objects.select_for_update().get(pk=stage.pk)
    _refuse_started(stage, "change")
    changed = _apply(stage, fields)
    if changed:
        _validated(stage)
        stage.save(update_fields=changed)
        changelog.record(
            stage.tournament, "stage.changed", user=user, stage=stage.pk, fields=changed
        )
    return stage


@transaction.atomic
def move_stage(stage: Stage, position: int, *, user=None) -> Stage:
    """Put a stage not started at ``position`` (1-based), after every started stage."""
    stages = _locked_stages(stage.tournament)
    current = next(s for s in stages if s.pk == stage.pk)
    _refuse_started(current, "move")
    stages.remove(current)
    floor = _last_started_index(stages) + 1
    index = max(0, min(position - 1, len(stages)))
    if index < floor:
        raise StageError(_("A stage not started cannot go before one that has started."))
    stages.insert(index, current)
    before = current.order
    _renumber(stages)
    if current.order != before:
        changelog.record(
            stage.tournament,
            "stage.moved",
            user=user,
            stage=current.pk,
            order_from=before,
            order_to=current.order,
        )
    return current


@transaction.atomic
def remove_stage(stage: Stage, *, user=None) -> None:
    """Remove a stage not started; the stages after it move up."""
    stages = _locked_stages(stage.tournament)
    current = next(s for s in stages if s.pk == stage.pk)
    _refuse_started(current, "remove")
    stages.remove(current)
    name = current.name
    current.delete()
    _renumber(stages)
    changelog.record(stage.tournament, "stage.removed", user=user, stage=stage.pk, stage_name=name)


# --------------------------------------------------------------------------- presets of days


@dataclass(frozen=True)
class DayShape:
    """The numbers an organizer gives for a preset day."""

    groups_double: bool = False
    mitchell_rounds: int = 3
    danish_rounds: int = 3
    swiss_rounds: int = 5
    knockout: int = 8
    third_place_match: bool = True


DAY_PRESETS = ("groups_knockout", "groups", "knockout", "open", "swiss_knockout")


def day_stages(preset: str, shape: DayShape) -> list[dict[str, Any]]:
    """The stages of a preset day, as fields for :func:`add_stage` (first stage first)."""
    knockout = {
        "name": _("Knock-out"),
        "kind": Stage.Kind.KNOCKOUT,
        "third_place_match": shape.third_place_match,
    }
    if preset == "groups_knockout":
        return [
            {
                "name": _("Groups"),
                "kind": Stage.Kind.ROUND_ROBIN,
                "double_round_robin": shape.groups_double,
            },
            knockout,
        ]
    if preset == "groups":
        return [
            {
                "name": _("Groups"),
                "kind": Stage.Kind.ROUND_ROBIN,
                "double_round_robin": shape.groups_double,
            }
        ]
    if preset == "knockout":
        return [knockout]
    if preset == "open":
        return [
            {
                "name": _("Mitchell"),
                "kind": Stage.Kind.MITCHELL,
                "rounds_planned": shape.mitchell_rounds,
            },
            {
                "name": _("Danish"),
                "kind": Stage.Kind.DANISH,
                "rounds_planned": shape.danish_rounds,
                "carry_over": True,
                "advance_count": shape.knockout,
            },
            knockout,
        ]
    if preset == "swiss_knockout":
        return [
            {
                "name": _("Swiss"),
                "kind": Stage.Kind.SWISS,
                "rounds_planned": shape.swiss_rounds,
                "advance_count": shape.knockout,
            },
            knockout,
        ]
    raise StageError(_("Unknown day preset “%(name)s”.") % {"name": preset})


# --------------------------------------------------------------------------- said in words


def counted_stages(stage: Stage, stages: list[Stage]) -> list[Stage]:
    """The stages whose rounds count in ``stage``'s ranking, as ``pairing.chain_stages`` reads
    them, but from a list in memory (so the desk can say it before anything is drawn)."""
    chain = [stage]
    if not stage.carry_over or stage.kind not in PAIRED_BY_ROUND:
        return chain
    if stage.kind == Stage.Kind.MITCHELL:
        return chain
    earlier = [s for s in stages if s.order < stage.order]
    for previous in sorted(earlier, key=lambda s: -s.order):
        if previous.kind not in PAIRED_BY_ROUND:
            break
        chain.append(previous)
        if not previous.carry_over or previous.kind == Stage.Kind.MITCHELL:
            break
    return list(reversed(chain))


def _names(stages: list[Stage]) -> str:
    return " + ".join(f"“{s.name}”" for s in stages)


def ranking_sentence(stage: Stage, stages: list[Stage]) -> str:
    """Which ranking a stage's standings show, in words."""
    if stage.kind == Stage.Kind.DUPLICATE:
        return _(
            "Ranking against the field: on each board a line is compared with the lines of its "
            "direction that held the same cards; in a Mitchell one ranking per direction, "
            "unless the arrow switch makes one overall."
        )
    if stage.kind not in PAIRED_BY_ROUND:
        return _("Standings of this stage only, group by group.")
    counted = counted_stages(stage, stages)
    if len(counted) == 1:
        return _("Ranking of this stage's rounds only.")
    return _("Combined ranking: the rounds of %(stages)s count together (carry-over).") % {
        "stages": _names(counted)
    }


def kept_places_sentences(stage: Stage) -> list[str]:
    """The places kept for categories among the lines going on, one sentence a category."""
    return [
        ngettext(
            "%(n)d place is kept for the best line of “%(category)s”.",
            "%(n)d places are kept for the best lines of “%(category)s”.",
            count,
        )
        % {"n": count, "category": category_label(category)}
        for category, count in (stage.category_places or {}).items()
    ]


def qualification_sentence(stage: Stage, stages: list[Stage]) -> str:
    """How ``stage`` sends lines to the stage after it, in words ("" for the last stage)."""
    following = [s for s in stages if s.order > stage.order]
    if not following:
        return ""
    nxt = min(following, key=lambda s: s.order)
    if nxt.kind != Stage.Kind.KNOCKOUT:
        if nxt.kind in PAIRED_BY_ROUND and nxt.carry_over and stage.kind in PAIRED_BY_ROUND:
            return _("Every line goes on to “%(next)s”, with its score carried over.") % {
                "next": nxt.name
            }
        return _("Every line goes on to “%(next)s”.") % {"next": nxt.name}
    if stage.kind == Stage.Kind.DUPLICATE:
        if stage.advance_count:
            return _(
                "The top %(n)d against the field seed “%(next)s”: in a Mitchell each direction's "
                "lines place by place, so the North-South and East-West winners are seeds 1 and 2."
            ) % {"n": stage.advance_count, "next": nxt.name}
        return _(
            "The top lines against the field seed “%(next)s” (how many is asked when the stage is "
            "closed): in a Mitchell each direction's lines place by place."
        ) % {"next": nxt.name}
    if stage.kind == Stage.Kind.ROUND_ROBIN:
        return _(
            "The top lines of each group (chosen when the stage is closed) are crossed into "
            "“%(next)s”: A1 against B2, B1 against A2."
        ) % {"next": nxt.name}
    if stage.kind in PAIRED_BY_ROUND:
        counted = counted_stages(stage, stages)
        if stage.advance_count:
            if len(counted) > 1:
                sentence = _(
                    "The top %(n)d of the combined ranking of %(stages)s seed “%(next)s”."
                ) % {
                    "n": stage.advance_count,
                    "stages": _names(counted),
                    "next": nxt.name,
                }
            else:
                sentence = _("The top %(n)d of the ranking of “%(stage)s” seed “%(next)s”.") % {
                    "n": stage.advance_count,
                    "stage": stage.name,
                    "next": nxt.name,
                }
            return " ".join([sentence, *kept_places_sentences(stage)])
        return _("How many lines seed “%(next)s” is asked when the stage is closed.") % {
            "next": nxt.name
        }
    return _("The winners go on to “%(next)s”.") % {"next": nxt.name}
