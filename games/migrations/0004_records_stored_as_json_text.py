"""Records are kept as PostgreSQL ``json`` (their text) instead of ``jsonb``
(``games.models.RecordField``), and without the envelope's ``match`` field, which records have
not been stored with since batches came (``services.submit_records``) and which the engine,
reading the stored text as it is, would refuse."""

from django.db import migrations

import games.models


def drop_match_field(apps, schema_editor):
    """Take the ``match`` field out of any record stored with it, before the column changes."""
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        # ``::jsonb``: a no-op on the column as it is here, and a test runs it on ``json``
        sql = (
            "UPDATE games_submission SET document = document::jsonb - 'match' "
            "WHERE document::jsonb ? 'match'"
        )
    elif vendor == "sqlite":
        sql = (
            "UPDATE games_submission SET document = json_remove(document, '$.match') "
            "WHERE json_type(document, '$.match') IS NOT NULL"
        )
    else:  # pragma: no cover - the project runs on PostgreSQL and SQLite
        submissions = apps.get_model("games", "Submission")
        for submission in submissions.objects.all().iterator():
            if isinstance(submission.document, dict) and "match" in submission.document:
                submission.document.pop("match")
                submission.save(update_fields=["document"])
        return
    schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0003_standing_read_from_result_versions"),
    ]

    operations = [
        migrations.RunPython(drop_match_field, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="submission",
            name="document",
            field=games.models.RecordField(
                encoder=games.models.RecordEncoder,
                help_text="The record exactly as submitted.",
                verbose_name="record",
            ),
        ),
    ]
