"""Tournaments created before the status followed the stages: set it from them once."""

from django.db import migrations


def status_from_stages(apps, schema_editor):
    Tournament = apps.get_model("tournaments", "Tournament")
    Stage = apps.get_model("tournaments", "Stage")
    Round = apps.get_model("tournaments", "Round")
    for tournament in Tournament.objects.all():
        statuses = list(Stage.objects.filter(tournament=tournament).values_list("status", flat=True))
        if statuses and all(status == "closed" for status in statuses):
            status = "finished"
        elif Round.objects.filter(stage__tournament=tournament).exists():
            status = "running"
        else:
            status = "draft"
        if tournament.status != status:
            Tournament.objects.filter(pk=tournament.pk).update(status=status)


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0002_load_vp_tables")]

    operations = [migrations.RunPython(status_from_stages, migrations.RunPython.noop)]
