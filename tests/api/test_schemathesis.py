"""schemathesis against the served OpenAPI schema: no generated request gets a 500.

Requests go straight to the WSGI application (no server) with an organizer's token, over a
tournament with lines, matches and a verified record, so generated ids sometimes hit real rows.
Each operation of the schema is a test of its own, so pytest-xdist spreads them. Bounded: the
schema's own examples and ``MAX_EXAMPLES`` fuzzed requests per operation, valid and invalid.
schemathesis's coverage phase (every boundary and wrong-type value of every parameter, about
3,500 requests over this schema, three quarters of the time) is left out here;
``SCHEMATHESIS_COVERAGE=1`` runs it too, as ``.ci/run`` does.
"""

import json
import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from games import services
from tests.api import factories

MAX_EXAMPLES = 8
PHASES = ["examples", "fuzzing"] + (["coverage"] if os.environ.get("SCHEMATHESIS_COVERAGE") else [])
_auth = {}


def _served_schema():
    """The schema ``/api/schema/`` serves, as JSON data, built at collection time so that each
    operation is a test of its own (pytest-xdist spreads them over its workers)."""
    from drf_spectacular.renderers import OpenApiJsonRenderer

    from games.api.schema import RecordSchemaGenerator

    document = RecordSchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(document, renderer_context={}))


schema = schemathesis.openapi.from_dict(_served_schema())
schema.app = get_wsgi_application()
schema.config.phases.update(phases=PHASES)


@pytest.fixture
def api_world(db, eager_celery, django_capture_on_commit_callbacks):
    organizer = factories.user("st-organizer", is_staff=True)
    tournament = factories.tournament(lines=3, organizer=organizer)
    match = factories.matches(tournament)[0]
    with django_capture_on_commit_callbacks(execute=True):
        services.submit_record(match, factories.record(tournament), user=organizer)
    _auth["Authorization"] = f"Token {Token.objects.create(user=organizer).key}"
    # Django closes the database connection at the end of each WSGI request; inside the test's
    # transaction that would close it under the test (the test client disconnects these too).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_server_error(case, api_world):
    case.call_and_validate(headers=dict(_auth), checks=[not_a_server_error])
