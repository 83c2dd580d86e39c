"""A small HTTP receiver on 127.0.0.1 that answers with scripted status codes."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Receiver:
    def __init__(self):
        self.requests = []  # (headers, raw body) of every POST
        self.effects = {}  # delivery id -> event: what a de-duplicating receiver applied
        self.script = []  # status codes to answer, in order; 200 once it runs out
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    receiver.requests.append((dict(self.headers), body))
                    status = receiver.script.pop(0) if receiver.script else 200
                    if status == 200:
                        delivery_id = self.headers["X-Scopa-Delivery"]
                        receiver.effects.setdefault(delivery_id, json.loads(body)["event"])
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/scopa?site=1"
        # shutdown() waits for the loop's next poll: at the default 0.5 s that was half a
        # second of every webhook test's teardown
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


@pytest.fixture
def webhook_settings(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.WEBHOOK_RETRY_EAGER = True
    settings.WEBHOOK_RETRY_BASE_S = 0
    settings.WEBHOOK_TIMEOUT_S = 2
    return settings
