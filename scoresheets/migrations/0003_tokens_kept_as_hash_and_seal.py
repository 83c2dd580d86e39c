"""Private link tokens leave the table: each is kept as its SHA-256 (the lookup) and sealed with
the site key (the reprint), scoresheets/tokens.py. Every link keeps working and can be printed
again; back, the tokens are opened from their seals (with the key the seals were made with)."""

from django.db import migrations, models

from scoresheets import tokens


def hash_and_seal(apps, schema_editor):
    PrivateLink = apps.get_model("scoresheets", "PrivateLink")
    for link in PrivateLink.objects.filter(token_hash__isnull=True).iterator():
        link.token_hash = tokens.token_hash(link.token)
        link.token_sealed = tokens.seal(link.token)
        link.save(update_fields=["token_hash", "token_sealed"])


def open_the_seals(apps, schema_editor):
    PrivateLink = apps.get_model("scoresheets", "PrivateLink")
    for link in PrivateLink.objects.filter(token__isnull=True).iterator():
        token = tokens.unseal(link.token_sealed, link.token_hash)
        if token is None:
            raise RuntimeError(
                f"Private link {link.pk}: no key of this site opens its sealed token (was "
                "SECRET_KEY changed?); set the key it was sealed with and migrate back again."
            )
        link.token = token
        link.save(update_fields=["token"])


class Migration(migrations.Migration):

    dependencies = [
        ("scoresheets", "0002_indexes_led_by_a_unique_one"),
    ]

    operations = [
        migrations.AddField(
            model_name="privatelink",
            name="token_hash",
            field=models.CharField(
                editable=False, max_length=64, null=True, verbose_name="token hash"
            ),
        ),
        migrations.AddField(
            model_name="privatelink",
            name="token_sealed",
            field=models.CharField(
                blank=True, default="", editable=False, max_length=120, verbose_name="sealed token"
            ),
        ),
        migrations.AlterField(
            model_name="privatelink",
            name="token",
            field=models.CharField(max_length=43, null=True, unique=True, verbose_name="token"),
        ),
        migrations.RunPython(hash_and_seal, open_the_seals),
        migrations.RemoveField(model_name="privatelink", name="token"),
        migrations.AlterField(
            model_name="privatelink",
            name="token_hash",
            field=models.CharField(
                editable=False, max_length=64, unique=True, verbose_name="token hash"
            ),
        ),
    ]
