import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config.celery import app as celery_app
from tests.api import factories


@pytest.fixture(autouse=True)
def eager_celery():
    """API tests run the verification task in-process, whatever broker the environment names."""
    saved = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = saved


@pytest.fixture
def organizer(db):
    """Organizer of ``tournament``; may create tournaments (the permission, not staff status)."""
    from django.contrib.auth.models import Permission

    user = factories.user("organizer")
    user.user_permissions.add(Permission.objects.get(codename="add_tournament"))
    return user


@pytest.fixture
def referee(db):
    return factories.user("referee")


@pytest.fixture
def tournament(db, organizer, referee):
    return factories.tournament(lines=3, organizer=organizer, referee=referee)


@pytest.fixture
def match(tournament):
    return factories.matches(tournament)[0]


def client_for(user=None, token=False):
    client = APIClient()
    if user is not None:
        if token:
            key, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {key.key}")
        else:
            client.force_authenticate(user)
    return client


@pytest.fixture
def api():
    return client_for
