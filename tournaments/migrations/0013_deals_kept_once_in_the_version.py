"""The deals are kept once, in the sheet of each result version: the deal rows that repeated the
version in force go, and the match row keeps whether tie-break deals decided it (what the
listings show). Every result has had its version since 0004, whose sheet holds its deals."""

from django.db import migrations, models


def _sheet_rows(match, sheet):
    """The deal rows a sheet in force stood for: {(number, line): (points, tie-break)}."""
    rows = {}
    for index, deal in enumerate(sheet.get("deals") or []):
        for side, line_id in enumerate((match.home_id, match.away_id)):
            if line_id is not None:
                rows[(deal.get("number", index), line_id)] = (
                    deal["points"][side],
                    bool(deal.get("tiebreak", False)),
                )
    return rows


def keep_deals_in_the_sheets(apps, schema_editor):
    """Mark the tie-breaks from the sheets in force (as the result writer does from now on),
    after checking that the deal rows about to go say nothing those sheets do not: rows that
    differ were written by hand, and the migration stops rather than lose them."""
    DealResult = apps.get_model("tournaments", "DealResult")
    Match = apps.get_model("tournaments", "Match")
    ResultVersion = apps.get_model("tournaments", "ResultVersion")
    rows_of = {}
    for row in DealResult.objects.order_by().iterator(chunk_size=2000):
        rows_of.setdefault(row.match_id, {})[(row.number, row.line_id)] = (
            row.points,
            row.is_tiebreak,
        )
    sheets = {
        version.match_id: version.sheet
        for version in ResultVersion.objects.filter(status="in_force", sheet__isnull=False)
        .order_by()
        .only("match_id", "sheet")
        .iterator(chunk_size=2000)
    }
    matches = Match.objects.in_bulk(set(rows_of) | set(sheets))
    differ = sorted(
        match_id
        for match_id, rows in rows_of.items()
        if match_id not in sheets or _sheet_rows(matches[match_id], sheets[match_id]) != rows
    )
    if differ:
        raise RuntimeError(
            "Deal rows of matches %s differ from their result in force; put each match's "
            "result right (save it again from the desk, or delete it) and migrate again."
            % ", ".join(map(str, differ[:20]))
        )
    tiebreaks = [
        match_id
        for match_id, sheet in sheets.items()
        if any(deal.get("tiebreak") for deal in sheet.get("deals") or [])
    ]
    Match.objects.filter(pk__in=tiebreaks).update(has_tiebreak=True)


def rebuild_deal_rows(apps, schema_editor):
    """Back: the deal rows again, one per side and deal of each sheet in force."""
    DealResult = apps.get_model("tournaments", "DealResult")
    ResultVersion = apps.get_model("tournaments", "ResultVersion")
    in_force = ResultVersion.objects.filter(status="in_force", sheet__isnull=False)
    rows = []
    for version in in_force.select_related("match").iterator(chunk_size=2000):
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
        if len(rows) >= 2000:
            DealResult.objects.bulk_create(rows)
            rows = []
    DealResult.objects.bulk_create(rows)


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
                help_text="Updated with each result: whether tie-break deals decided the match.",
                verbose_name="decided by tie-break deals",
            ),
        ),
        migrations.RunPython(keep_deals_in_the_sheets, rebuild_deal_rows),
        migrations.DeleteModel(
            name="DealResult",
        ),
    ]
