"""VP tables: from the editable database rows to the pure ``algorithms.vp.VPTable``."""

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from tournaments.algorithms import vp as vp_algo
from tournaments.exceptions import TournamentError
from tournaments.models import VPTable, VPTableRow

logger = logging.getLogger(__name__)

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "vp_tables.json"


def vp_table_from_model(
    table: VPTable, rows: Iterable[VPTableRow] | None = None
) -> vp_algo.VPTable:
    """The validated algorithm table for a ``VPTable`` row (``rows`` if already fetched).

    Raises ``TournamentError`` when an organizer's edits left the table inconsistent (a gap, an
    overlap), so a result is never scored on a broken scale.
    """
    if rows is None and "rows" in getattr(table, "_prefetched_objects_cache", {}):
        rows = table.rows.all()
    if rows is None:
        # Sorted here, not by the rows' default ordering, which joins the table to order by it
        # (a third of this function's CPU when a lone record was scored: 1.2 ms against 0.8).
        values = list(
            table.rows.order_by().values_list("vp_winner", "vp_loser", "mp_from", "mp_to")
        )
    else:
        values = [(r.vp_winner, r.vp_loser, r.mp_from, r.mp_to) for r in rows]
    try:
        return vp_algo.VPTable(
            rows=tuple(vp_algo.VPRow(*row) for row in sorted(values, key=lambda row: row[2])),
            kind=vp_algo.TableKind(table.kind),
            win_vp=table.win_vp,
            draw_vp=table.draw_vp,
            loss_vp=table.loss_vp,
            timeout_min_vp=table.timeout_min_vp,
        )
    except vp_algo.VPTableError as error:
        raise TournamentError(
            _("VP table “%(name)s” is inconsistent: %(error)s")
            % {"name": table, "error": describe(error)}
        ) from error


def describe(error: vp_algo.VPTableError) -> str:
    """What is wrong with a table, in the language of the request (the algorithm's English
    is for logs and tests)."""
    message = _(error.message)
    return message % error.params if error.params else message


def load_table_data(
    entries: Iterable[Mapping[str, Any]],
    *,
    table_model: type[VPTable] = VPTable,
    row_model: type[VPTableRow] = VPTableRow,
    replace: bool = False,
) -> list[VPTable]:
    """Create the tables of ``vp_tables.json`` entries (used by the data migration and tests).

    Existing slugs are left alone unless ``replace``: organizers may have edited them.
    """
    created = []
    for entry in entries:
        vp_algo.table_from_dict(entry)  # validates before anything is written
        existing = table_model.objects.filter(slug=entry["slug"]).first()
        if existing is not None and not replace:
            continue
        if existing is not None:
            existing.rows.all().delete()
            table = existing
        else:
            table = table_model(slug=entry["slug"])
        table.name = entry.get("name_it") or entry.get("name_en") or entry["slug"]
        table.kind = entry.get("kind", "margin")
        table.target_points = entry.get("target_points")
        table.deals_min = entry.get("deals_min")
        table.deals_max = entry.get("deals_max")
        table.win_vp = entry.get("win_vp", 20)
        table.draw_vp = entry.get("draw_vp", 10)
        table.loss_vp = entry.get("loss_vp", 0)
        table.timeout_min_vp = entry.get("timeout_min_vp", 14)
        table.save()
        row_model.objects.bulk_create(
            row_model(table=table, vp_winner=w, vp_loser=lo, mp_from=a, mp_to=b)
            for w, lo, a, b in entry.get("rows", [])
        )
        created.append(table)
    return created


def load_default_tables(*, replace: bool = False) -> list[VPTable]:
    """Load ``tournaments/data/vp_tables.json`` into the database."""
    with open(DATA_PATH, encoding="utf-8") as handle:
        entries = json.load(handle)
    with transaction.atomic():
        return load_table_data(entries, replace=replace)
