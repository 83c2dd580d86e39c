"""Drop the index of a foreign key that a longer index already leads with, as in
``tournaments`` 0012: only the index goes (``AlterField`` would drop and re-add the foreign
key, checking every row again)."""

import django.db.models.deletion
from django.db import migrations, models

from tournaments.migration_operations import drop_indexes


# (table, column, index) of each foreign key whose index goes
DROPPED = [
    ('scoresheets_tablereport', 'match_id', 'scoresheets_tablereport_match_id_890982c5'),
]


class Migration(migrations.Migration):

    dependencies = [
        ('scoresheets', '0001_initial'),
        ('tournaments', '0012_indexes_led_by_a_unique_one'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=drop_indexes(DROPPED),
            state_operations=[
                migrations.AlterField(
                    model_name='tablereport',
                    name='match',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='table_reports', to='tournaments.match', verbose_name='match'),
                ),
            ],
        ),
    ]
