"""Load the VP tables of seed 000 (7, 11, 21 points) and seed 003 (win/draw/loss) as data rows.

Reads ``tournaments/data/vp_tables.json`` at migration time; tables already present (by slug) are
left alone, so re-running never overwrites an organizer's edits. Reversing removes only tables no
tournament uses.
"""

import json
from pathlib import Path

from django.db import migrations

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "vp_tables.json"


def load(apps, schema_editor):
    VPTable = apps.get_model("tournaments", "VPTable")
    VPTableRow = apps.get_model("tournaments", "VPTableRow")
    with open(DATA_PATH, encoding="utf-8") as handle:
        entries = json.load(handle)
    for entry in entries:
        if VPTable.objects.filter(slug=entry["slug"]).exists():
            continue
        table = VPTable.objects.create(
            slug=entry["slug"],
            name=entry.get("name_it") or entry.get("name_en") or entry["slug"],
            kind=entry.get("kind", "margin"),
            target_points=entry.get("target_points"),
            deals_min=entry.get("deals_min"),
            deals_max=entry.get("deals_max"),
            win_vp=entry.get("win_vp", 20),
            draw_vp=entry.get("draw_vp", 10),
            loss_vp=entry.get("loss_vp", 0),
            timeout_min_vp=entry.get("timeout_min_vp", 14),
        )
        VPTableRow.objects.bulk_create(
            VPTableRow(table=table, vp_winner=w, vp_loser=lo, mp_from=a, mp_to=b)
            for w, lo, a, b in entry.get("rows", [])
        )


def unload(apps, schema_editor):
    VPTable = apps.get_model("tournaments", "VPTable")
    with open(DATA_PATH, encoding="utf-8") as handle:
        slugs = [entry["slug"] for entry in json.load(handle)]
    VPTable.objects.filter(slug__in=slugs, tournaments__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0001_initial")]

    operations = [migrations.RunPython(load, unload)]
