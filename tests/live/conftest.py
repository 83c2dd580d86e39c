"""The push tests' own fixture; the channel layer and daphne fixtures are in tests/conftest.py."""

import pytest


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """The factories give every player a password; nothing here logs in with one."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
