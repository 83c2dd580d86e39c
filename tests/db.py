"""The test database seen from outside Django's connection (another session, a killer of
backends), for tests of what a second client does to a transaction."""

import psycopg
from django.db import connection


def other_connection() -> psycopg.Connection:
    """A second session on the test database, in autocommit."""
    s = connection.settings_dict
    return psycopg.connect(
        host=s["HOST"] or "127.0.0.1",
        port=s["PORT"] or 5432,
        user=s["USER"] or "postgres",
        password=s["PASSWORD"] or None,
        dbname=s["NAME"],
        autocommit=True,
    )
