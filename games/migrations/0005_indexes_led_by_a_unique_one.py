"""Drop the index of a foreign key that a longer index already leads with, as in
``tournaments`` 0012: only the index goes (``AlterField`` would drop and re-add the foreign
key, checking every row again)."""

import django.db.models.deletion
from django.db import migrations, models

from tournaments.migration_operations import drop_indexes


# (table, column, index) of each foreign key whose index goes
DROPPED = [
    ('games_submission', 'match_id', 'games_submission_match_id_4ff2ac1b'),
]


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0004_records_stored_as_json_text'),
        ('tournaments', '0012_indexes_led_by_a_unique_one'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=drop_indexes(DROPPED),
            state_operations=[
                migrations.AlterField(
                    model_name='submission',
                    name='match',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='submissions', to='tournaments.match', verbose_name='match'),
                ),
            ],
        ),
    ]
