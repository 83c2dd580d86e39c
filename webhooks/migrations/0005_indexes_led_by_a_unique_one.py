"""Drop the index of a foreign key that a longer index already leads with, as in
``tournaments`` 0012: only the index goes (``AlterField`` would drop and re-add the foreign
key, checking every row again)."""

import django.db.models.deletion
from django.db import migrations, models

from tournaments.migration_operations import drop_indexes


# (table, column, index) of each foreign key whose index goes
DROPPED = [
    ('webhooks_delivery', 'tournament_id', 'webhooks_delivery_tournament_id_ef16b95a'),
]


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0012_indexes_led_by_a_unique_one'),
        ('webhooks', '0004_delivery_sweep_indexes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=drop_indexes(DROPPED),
            state_operations=[
                migrations.AlterField(
                    model_name='delivery',
                    name='tournament',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='webhook_deliveries', to='tournaments.tournament', verbose_name='tournament'),
                ),
            ],
        ),
    ]
