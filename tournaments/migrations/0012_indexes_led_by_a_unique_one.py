"""Drop the single-column indexes of foreign keys that a unique index (or another index)
already leads with: the longer index answers the same lookups, and every row written paid for
both (a verified record wrote 16 deal rows, its score rows and its version). Only the indexes
go: ``AlterField`` alone would drop and re-add each foreign key (checking every row again)
and, for the versions, also drop ``one_result_version_in_force``, the partial unique index on
the same column."""

import django.db.models.deletion
from django.db import migrations, models

from tournaments.migration_operations import drop_indexes


# (table, column, index) of each foreign key whose index goes
DROPPED = [
    ('tournaments_dealresult', 'match_id', 'tournaments_dealresult_match_id_567e2137'),
    ('tournaments_entry', 'tournament_id', 'tournaments_entry_tournament_id_8241213d'),
    ('tournaments_group', 'stage_id', 'tournaments_group_stage_id_c85a290e'),
    ('tournaments_groupmember', 'group_id', 'tournaments_groupmember_group_id_ce770a08'),
    ('tournaments_linemember', 'line_id', 'tournaments_linemember_line_id_27006571'),
    ('tournaments_match', 'group_id', 'tournaments_match_group_id_da2df0ed'),
    ('tournaments_matchresult', 'match_id', 'tournaments_matchresult_match_id_34b34a75'),
    ('tournaments_resultversion', 'match_id', 'tournaments_resultversion_match_id_2d379a3e'),
    ('tournaments_round', 'stage_id', 'tournaments_round_stage_id_04ccaf04'),
    ('tournaments_stage', 'tournament_id', 'tournaments_stage_tournament_id_fdefbf65'),
    ('tournaments_tournamentrole', 'tournament_id', 'tournaments_tournamentrole_tournament_id_4f18607b'),
    ('tournaments_vptablerow', 'table_id', 'tournaments_vptablerow_table_id_cae05bfb'),
]


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0011_bye_source_and_proposed_versions'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=drop_indexes(DROPPED),
            state_operations=[
                migrations.AlterField(
                    model_name='dealresult',
                    name='match',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='deals', to='tournaments.match', verbose_name='match'),
                ),
                migrations.AlterField(
                    model_name='entry',
                    name='tournament',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='entries', to='tournaments.tournament', verbose_name='tournament'),
                ),
                migrations.AlterField(
                    model_name='group',
                    name='stage',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='groups', to='tournaments.stage', verbose_name='stage'),
                ),
                migrations.AlterField(
                    model_name='groupmember',
                    name='group',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='members', to='tournaments.group', verbose_name='group'),
                ),
                migrations.AlterField(
                    model_name='linemember',
                    name='line',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='members', to='tournaments.line', verbose_name='line'),
                ),
                migrations.AlterField(
                    model_name='match',
                    name='group',
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='matches', to='tournaments.group', verbose_name='group'),
                ),
                migrations.AlterField(
                    model_name='matchresult',
                    name='match',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='results', to='tournaments.match', verbose_name='match'),
                ),
                migrations.AlterField(
                    model_name='resultversion',
                    name='match',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='versions', to='tournaments.match', verbose_name='match'),
                ),
                migrations.AlterField(
                    model_name='round',
                    name='stage',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='rounds', to='tournaments.stage', verbose_name='stage'),
                ),
                migrations.AlterField(
                    model_name='stage',
                    name='tournament',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='stages', to='tournaments.tournament', verbose_name='tournament'),
                ),
                migrations.AlterField(
                    model_name='tournamentrole',
                    name='tournament',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='roles', to='tournaments.tournament', verbose_name='tournament'),
                ),
                migrations.AlterField(
                    model_name='vptablerow',
                    name='table',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='rows', to='tournaments.vptable', verbose_name='table'),
                ),
            ],
        ),
    ]
