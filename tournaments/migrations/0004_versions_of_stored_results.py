"""Give every result stored before versions existed its version 1, in force.

The result in force must be a version (one per match, enforced by the database); a verified
record that stood for the match becomes that version's record when its totals agree.
"""

from django.db import migrations


def _sheet(match, deal_rows, results):
    lines = (match.home_id, match.away_id)
    side_of = {line: side for side, line in enumerate(lines)}
    deals = {}
    for row in deal_rows:
        deal = deals.setdefault(
            row.number,
            {
                "number": row.number,
                "points": [0, 0],
                "breakdown": [{}, {}],
                "tiebreak": row.is_tiebreak,
                "penalty": row.is_penalty,
                "last_capture": None,
            },
        )
        side = side_of.get(row.line_id)
        if side is None:
            continue
        deal["points"][side] = row.points
        deal["breakdown"][side] = dict(row.breakdown or {})
    totals = [0, 0]
    for result in results:
        if result.line_id in side_of:
            totals[side_of[result.line_id]] = result.points
    winner = side_of.get(match.winner_id)
    margin = 0 if winner is None else max(0, totals[winner] - totals[1 - winner])
    return {
        "deals": [deals[n] for n in sorted(deals)],
        "outcome": match.outcome,
        "offender": side_of.get(match.offender_id),
        "time_expired": False,
        "result": {"totals": totals, "winner": winner, "margin": margin},
    }


def forwards(apps, schema_editor):
    Match = apps.get_model("tournaments", "Match")
    ResultVersion = apps.get_model("tournaments", "ResultVersion")
    Submission = apps.get_model("games", "Submission")
    done = Match.objects.filter(status="done").exclude(outcome="bye").exclude(home=None)
    for match in done.exclude(away=None).iterator():
        if ResultVersion.objects.filter(match=match).exists():
            continue
        sheet = _sheet(
            match,
            list(match.deals.all()),
            list(match.results.all()),
        )
        standing = Submission.objects.filter(match=match, is_standing=True).first()
        totals = ((standing.verdict or {}).get("totals") if standing else None) or None
        if standing is not None and list(totals or []) == sheet["result"]["totals"]:
            source, submission = "record", standing
        else:
            source, submission = "import", None
        ResultVersion.objects.create(
            match=match,
            number=1,
            source=source,
            status="in_force",
            sheet=sheet,
            submission=submission,
            reason="",
        )


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0003_result_versions"),
        ("games", "0002_submission_source_demo"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
