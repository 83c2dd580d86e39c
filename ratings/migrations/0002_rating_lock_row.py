from django.db import migrations


def create_lock(apps, schema_editor):
    apps.get_model("ratings", "RatingLock").objects.get_or_create(id=1)


class Migration(migrations.Migration):
    dependencies = [("ratings", "0001_initial")]

    operations = [migrations.RunPython(create_lock, migrations.RunPython.noop)]
