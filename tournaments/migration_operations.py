"""Operations that the migrations of more than one app use. Applied migrations import them, so
what they do must not change."""

from django.db import migrations


def drop_indexes(dropped) -> list[migrations.RunSQL]:
    """Drop these indexes, each given as ``(table, column, index name)``, and nothing else: the
    foreign keys they served stay as they are. The reverse creates each again on its column."""
    return [
        migrations.RunSQL(
            f'DROP INDEX IF EXISTS "{name}"',
            reverse_sql=f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}")',
        )
        for table, column, name in dropped
    ]
