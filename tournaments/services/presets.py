"""Tournament presets: rule sets kept as data (``tournaments/data/presets.json``)."""

from __future__ import annotations

import json
import logging
import secrets
from functools import lru_cache
from pathlib import Path

from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _

from tournaments.exceptions import PresetError
from tournaments.models import (
    DeckStyle,
    EndRule,
    Role,
    TieBreak,
    Tournament,
    Variant,
    VPTable,
)
from tournaments.services import changelog, roles
from tournaments.services import stages as stage_service

logger = logging.getLogger(__name__)

PRESETS_PATH = Path(__file__).resolve().parent.parent / "data" / "presets.json"
PRESET_FIELDS = (
    "variant",
    "options",
    "deck_style",
    "seats_per_line",
    "end_rule",
    "end_value",
    "time_limit_s",
    "tiebreaks",
)


def _check(preset):
    slug = preset.get("slug", "?")
    problems = []
    if preset.get("variant") not in Variant.values:
        problems.append("variant")
    if preset.get("deck_style") not in DeckStyle.values:
        problems.append("deck_style")
    if preset.get("end_rule") not in EndRule.values:
        problems.append("end_rule")
    if not isinstance(preset.get("end_value"), int) or preset["end_value"] < 1:
        problems.append("end_value")
    if preset.get("seats_per_line") not in (1, 2, 3):
        problems.append("seats_per_line")
    if any(tb not in TieBreak.values for tb in preset.get("tiebreaks", [])):
        problems.append("tiebreaks")
    if problems:
        raise PresetError(
            _("Preset “%(slug)s” has invalid fields: %(fields)s")
            % {"slug": slug, "fields": ", ".join(problems)}
        )


@lru_cache(maxsize=1)
def load_presets() -> dict[str, dict]:
    """Presets by slug, validated."""
    with open(PRESETS_PATH, encoding="utf-8") as handle:
        presets = json.load(handle)
    for preset in presets:
        _check(preset)
    return {preset["slug"]: preset for preset in presets}


def preset_choices():
    return [(slug, preset["name"]) for slug, preset in load_presets().items()]


def _unique_slug(name):
    base = slugify(name)[:40] or "torneo"
    slug, n = base, 2
    while Tournament.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


@transaction.atomic
def create_tournament_from_preset(
    preset_slug,
    *,
    name,
    start_date,
    slug=None,
    user=None,
    stages=None,
    **overrides,
):
    """Create a tournament with a preset's rules; ``overrides`` set other model fields (venue,
    end_date, is_public …).

    ``stages``: optional ``[{"name", "kind", …}]`` (any of ``stages.EDITABLE_FIELDS``, e.g.
    from ``stages.day_stages``); stages get orders 1, 2, … in the given order.
    """
    preset = load_presets().get(preset_slug)
    if preset is None:
        raise PresetError(_("Unknown tournament preset “%(slug)s”.") % {"slug": preset_slug})
    table = VPTable.objects.filter(slug=preset["vp_table"]).first()
    if table is None:
        # The shipped tables (vp_tables.json) are restored if they went missing, e.g. after a
        # database flush; an organizer's own tables are never touched.
        from tournaments.services.vp import load_default_tables

        load_default_tables()
        table = VPTable.objects.filter(slug=preset["vp_table"]).first()
    if table is None:
        raise PresetError(
            _("The preset needs VP table “%(table)s”, which does not exist.")
            % {"table": preset["vp_table"]}
        )
    fields = {key: preset[key] for key in PRESET_FIELDS if key in preset}
    fields["options"] = dict(fields.get("options") or {})
    fields.update(overrides)
    tournament = Tournament.objects.create(
        slug=slug or _unique_slug(name),
        name=name,
        start_date=start_date,
        vp_table=table,
        lots_seed=overrides.pop("lots_seed", None) or secrets.randbits(48),
        **{k: v for k, v in fields.items() if k != "lots_seed"},
    )
    if user is not None and getattr(user, "is_authenticated", False):
        roles.grant(tournament, user, Role.ORGANIZER, by=user)
    for fields in stages or []:
        stage_service.add_stage(tournament, user=user, **fields)
    changelog.record(tournament, "tournament.created", user=user, preset=preset_slug)
    return tournament
