"""Records are kept as PostgreSQL ``json`` (their text) instead of ``jsonb``
(``games.models.RecordField``), and without the envelope's ``match`` field, which records have
not been stored with since batches came (``services.submit_records``) and which the engine,
reading the stored text as it is, would refuse."""

from django.db import migrations

import games.models


def drop_match_field(apps, schema_editor):
    """Take the ``match`` field out of any record stored with it, before the column changes."""
    if schema_editor.connection.vendor == "postgresql":
        # ``::jsonb``: a no-op on the column as it is here, and a test runs it on ``json``
        sql = (
            "UPDATE games_submission SET document = document::jsonb - 'match' "
            "WHERE document::jsonb ? 'match'"
        )
    else:  # SQLite, the embedded default
        sql = (
            "UPDATE games_submission SET document = json_remove(document, '$.match') "
            "WHERE json_type(document, '$.match') IS NOT NULL"
        )
    schema_editor.execute(sql)


def toast_records_on_insert(apps, schema_editor):
    """Move a record's text out of the row when it is written, not when it is verified.

    An 8 KiB record compresses to about 1.7 KiB of ``json`` text (``jsonb`` to about 2.5 KiB,
    which went out of the row at once), so it stayed in the row, until the verification's
    update added the verdict: that update then copied the text into a new row version and
    moved it out (the table about a third larger, and more work per verified record). From
    1 KiB a row is toasted at insert."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE games_submission SET (toast_tuple_target = 1024)")


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
        migrations.RunPython(toast_records_on_insert, migrations.RunPython.noop),
    ]
