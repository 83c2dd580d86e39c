"""The project boots on whatever database the environment names, with both languages."""

import pytest
from django.conf import settings
from django.core.management import call_command


def test_languages_are_italian_first_then_english():
    assert settings.LANGUAGE_CODE == "it"
    assert [code for code, _ in settings.LANGUAGES] == ["it", "en"]


@pytest.mark.django_db
def test_no_missing_migrations():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_celery_is_eager_only_without_a_broker():
    assert settings.CELERY_TASK_ALWAYS_EAGER == (not settings.CELERY_BROKER_URL)
