"""The deals are kept once, in the sheet of each result version: the deal rows that repeated the
version in force go, and the match row keeps whether tie-break deals decided it (what the
listings show). Every result has had its version since 0004, whose sheet holds its deals."""

from django.db import migrations, models


def mark_tiebreaks(apps, schema_editor):
    Match = apps.get_model("tournaments", "Match")
    Match.objects.filter(deals__is_tiebreak=True).update(has_tiebreak=True)


def rebuild_deal_rows(apps, schema_editor):
    """Back: the deal rows again, one per side and deal of each sheet in force."""
    DealResult = apps.get_model("tournaments", "DealResult")
    ResultVersion = apps.get_model("tournaments", "ResultVersion")
    in_force = ResultVersion.objects.filter(status="in_force", sheet__isnull=False)
    rows = []
    for version in in_force.select_related("match").iterator():
        match = version.match
        for index, deal in enumerate(version.sheet.get("deals") or []):
            for side, line_id in enumerate((match.home_id, match.away_id)):
                if line_id is None:
                    continue
                rows.append(
                    DealResult(
                        match=match,
                        number=deal.get("number", index),
                        line_id=line_id,
                        points=deal["points"][side],
                        breakdown=deal["breakdown"][side],
                        is_tiebreak=deal.get("tiebreak", False),
                        is_penalty=deal.get("penalty", False),
                    )
                )
    DealResult.objects.bulk_create(rows, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0012_indexes_led_by_a_unique_one"),
    ]

    operations = [
        migrations.AddField(
            model_name="match",
            name="has_tiebreak",
            field=models.BooleanField(
                default=False,
                help_text="Set with the result in force, whose version keeps the deals.",
                verbose_name="decided by tie-break deals",
            ),
        ),
        migrations.RunPython(mark_tiebreaks, rebuild_deal_rows),
        migrations.DeleteModel(
            name="DealResult",
        ),
    ]
