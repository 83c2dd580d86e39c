"""Records are kept as PostgreSQL ``json`` (their text) instead of ``jsonb``
(``games.models.RecordField``), and without the envelope's ``match`` field, which records have
not been stored with since it was taken out on submission (``services.record_body``) and which
the engine, reading the stored text as it is, would refuse."""

import json

from django.db import IntegrityError, migrations, transaction

import games.models
from games.models import content_hash


def drop_match_field(apps, schema_editor):
    """Take the ``match`` field out of any record stored with it, before the column changes,
    and hash the record again as it is kept now (``games.models.content_hash``): a record
    stored with the field was hashed with it, and sent again it would not be known as the same
    record. One that another submission of its match already holds under the new hash (it was
    sent again since) keeps its old hash, since a match holds one submission per hash; the
    other is the one found.

    On PostgreSQL the record is read back from ``jsonb``, which keeps numbers by value: a
    number written as ``1e16`` or ``-0.0`` hashes as ``10000000000000000`` or ``0.0``, and such
    a record sent again is a new submission (the text it came as is not stored anywhere)."""
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        # ``::jsonb``: a no-op on the column as it is here, and a test runs it on ``json``
        with_match = "jsonb_typeof(document::jsonb) = 'object' AND document::jsonb ? 'match'"
        text = "document::text"
    else:  # SQLite, the embedded default
        with_match = "json_type(document, '$.match') IS NOT NULL"
        text = "document"
    last = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(  # records are up to 1 MiB: a hundred at a time
                f"SELECT id, {text} FROM games_submission "
                f"WHERE {with_match} AND id > %s ORDER BY id LIMIT 100",
                [last],
            )
            rows = cursor.fetchall()
            if not rows:
                return
            for pk, stored in rows:
                document = json.loads(stored)
                document.pop("match")
                text_kept = json.dumps(document, ensure_ascii=False)
                try:
                    # The match's constraint (one submission per hash) says whether another
                    # submission holds the new hash, sent again since or meanwhile on a live
                    # site: in a savepoint, so that this record then keeps its old one.
                    with transaction.atomic(using=connection.alias):
                        cursor.execute(
                            "UPDATE games_submission SET document = %s, content_hash = %s "
                            "WHERE id = %s",
                            [text_kept, content_hash(document), pk],
                        )
                    continue
                except IntegrityError:
                    pass
                cursor.execute(
                    "UPDATE games_submission SET document = %s WHERE id = %s", [text_kept, pk]
                )
            last = rows[-1][0]


def toast_records_on_insert(apps, schema_editor):
    """Move a record's text out of the row when it is written, not when it is verified.

    An 8 KiB record compresses to about 1.7 KiB of ``json`` text (``jsonb`` to about 2.5 KiB,
    which went out of the row at once), so it stayed in the row, until the verification's
    update added the verdict: that update then copied the text into a new row version and
    moved it out (the table about a third larger, and more work per verified record). From
    1 KiB a row is toasted at insert."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE games_submission SET (toast_tuple_target = 1024)")


def toast_records_as_before(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE games_submission RESET (toast_tuple_target)")


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
        migrations.RunPython(toast_records_on_insert, toast_records_as_before),
    ]
