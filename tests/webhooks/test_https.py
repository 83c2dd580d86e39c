"""HTTPS receivers: the connection goes to the checked address and still verifies the
certificate for the URL's host name."""

import shutil
import ssl
import subprocess
from unittest import mock

import pytest

from tests.tournaments.conftest import make_tournament
from webhooks import services
from webhooks.models import Delivery, Endpoint, Event

from .conftest import Receiver

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command"),
]


@pytest.fixture
def tls_receiver(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    receiver = Receiver()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    receiver.server.socket = context.wrap_socket(receiver.server.socket, server_side=True)
    port = receiver.server.server_address[1]
    receiver.url = f"https://localhost:{port}/hook"
    with receiver:
        yield receiver, cert


def _deliver(receiver):
    tournament = make_tournament()
    Endpoint.objects.create(tournament=tournament, url=receiver.url, secret="k")
    (delivery,) = services.record_transition(tournament, Event.TOURNAMENT_FINISHED)
    services.attempt(str(delivery.pk), last=True)
    delivery.refresh_from_db()
    return delivery


def test_an_untrusted_certificate_is_refused(tls_receiver, webhook_settings):
    receiver, _ = tls_receiver
    delivery = _deliver(receiver)
    assert delivery.status == Delivery.Status.FAILED
    assert "CERTIFICATE_VERIFY_FAILED" in delivery.last_error
    assert not receiver.requests


def test_a_trusted_certificate_for_the_host_name_is_accepted(tls_receiver, webhook_settings):
    receiver, cert = tls_receiver
    trusting = ssl.create_default_context(cafile=str(cert))
    with mock.patch("webhooks.network.ssl.create_default_context", return_value=trusting):
        delivery = _deliver(receiver)
    assert delivery.status == Delivery.Status.DELIVERED
    headers, _ = receiver.requests[0]
    assert headers["Host"] == f"localhost:{receiver.server.server_address[1]}"
