"""Real Celery workers on a real Redis broker and PostgreSQL, started here, not mocked.

The fixtures start a private ``redis-server`` on port 6390 (so the shared Redis keeps running
for everyone else and an outage can be staged by stopping it), point this process's Celery app
at it, and start ``celery -A config worker --pool prefork -c 2`` subprocesses whose
``DATABASE_URL`` names pytest-django's test database. Tests use ``transactional_db`` so the
workers see committed rows.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config.broker import amqp_options, is_amqp
from config.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]
REDIS_PORT = int(os.environ.get("SCOPA_TEST_REDIS_PORT", "6390"))
# SCOPA_TEST_BROKER_URL=amqp://guest:guest@127.0.0.1:5672/<vhost> runs these tests on RabbitMQ
# (a vhost of their own, created here when rabbitmqctl is at hand, its queue purged first);
# otherwise on a private redis-server that the tests can stop and start.
AMQP_URL = os.environ.get("SCOPA_TEST_BROKER_URL", "")


def _amqp_reachable(url):
    """RabbitMQ answers on the URL's host and port (else the tests fall back to Redis)."""
    from kombu.utils.url import url_to_parts

    parts = url_to_parts(url)
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((parts.hostname or "127.0.0.1", parts.port or 5672)) == 0


USE_AMQP = is_amqp(AMQP_URL) and _amqp_reachable(AMQP_URL)
BROKER = AMQP_URL if USE_AMQP else f"redis://127.0.0.1:{REDIS_PORT}/0"


def _skip_reason():
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        return "pipeline tests need DATABASE_URL to name PostgreSQL"
    if not os.environ.get("CELERY_BROKER_URL"):
        return "pipeline tests need CELERY_BROKER_URL (a Redis broker)"
    if not USE_AMQP and not shutil.which("redis-server"):
        return "pipeline tests start their own redis-server, which is not installed"
    return None


SKIP_REASON = _skip_reason()


def _port_open(port):
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class RedisServer:
    """A private redis-server that a test can stop and start again."""

    def __init__(self, port, workdir):
        self.port = port
        self.workdir = workdir
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            if _port_open(self.port):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None


def _prepare_vhost(url):
    """Create the tests' vhost if it is missing and empty its queue of an earlier run."""
    from kombu import Connection

    vhost = url.rsplit("/", 1)[-1] or "/"
    if vhost != "/" and shutil.which("rabbitmqctl"):
        for cmd in (
            ["rabbitmqctl", "add_vhost", vhost],
            ["rabbitmqctl", "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"],
        ):
            subprocess.run(cmd, capture_output=True, timeout=60, check=False)
    with Connection(url, connect_timeout=5) as conn, contextlib.suppress(Exception):
        conn.default_channel.queue_purge("celery")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    if USE_AMQP:
        _prepare_vhost(BROKER)
        yield None
        return
    if _port_open(REDIS_PORT):
        pytest.skip(f"port {REDIS_PORT} is taken; set SCOPA_TEST_REDIS_PORT")
    server = RedisServer(REDIS_PORT, tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


def _reset_producer_pool():
    """Forget the cached broker pools and queue declarations so the next publish connects to
    the current broker_url with the current queue settings (kombu keys its pools by
    connection, so the other broker's pool is left intact)."""
    celery_app._pool = None
    with contextlib.suppress(AttributeError):
        celery_app.amqp._producer_pool = None
    celery_app.__dict__.pop("amqp", None)


@pytest.fixture
def broker(redis_server):
    """This process publishes to the tests' broker for the test's duration."""
    names = ["broker_write_url", "task_always_eager"]
    options = amqp_options() if USE_AMQP else {}
    names += [n for n in options if n not in names]
    saved = {name: celery_app.conf.get(name) for name in names}
    celery_app.conf.update(broker_write_url=BROKER, task_always_eager=False, **options)
    _reset_producer_pool()
    yield redis_server
    celery_app.conf.update(**saved)
    _reset_producer_pool()


def test_database_url():
    db = connection.settings_dict
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


class Workers:
    """Celery worker subprocesses (each ``--pool prefork -c 2``) on the test database."""

    def __init__(self, logdir):
        self.logdir = logdir
        self.procs = []

    def start(
        self, *, beat=False, sweep_every_s=1.0, pending_after_s=3.0, database_url=None, poison=False
    ):
        env = dict(os.environ)
        env.update(
            DATABASE_URL=database_url or test_database_url(),
            CELERY_BROKER_URL=BROKER,
            SCOPA_SWEEP_EVERY_S=str(sweep_every_s),
            SCOPA_RATING_SWEEP_EVERY_S=str(sweep_every_s),
            SCOPA_RATING_DEBOUNCE_S="1",
            SCOPA_PENDING_AFTER_S=str(pending_after_s),
            LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        index = len(self.procs)
        # ``poison_worker`` is celery with a record that kills its process (see there).
        main = ["tests/pipeline/poison_worker.py"] if poison else ["-m", "celery"]
        cmd = [
            sys.executable,
            *main,
            "-A",
            "config",
            "worker",
            "--pool",
            "prefork",
            "-c",
            "2",
            "-n",
            f"pipeline{index}@%h",
            "--without-gossip",
            "--without-mingle",
            "-l",
            "WARNING",
        ]
        if beat:
            cmd += ["-B", "--schedule", str(self.logdir / f"beat-{index}")]
        log = open(self.logdir / f"worker-{index}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.procs.append(proc)
        return proc

    def kill(self, proc, sig=signal.SIGKILL):
        """Kill the worker and its pool children at once (its own process group)."""
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
            proc.wait(30)

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)

    def logs(self):
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in self.logdir.glob("*.log"))


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def workers(transactional_db, broker, tmp_path):
    pool = Workers(tmp_path)
    yield pool
    pool.stop_all()


@pytest.fixture(autouse=True)
def unthrottled_submissions(monkeypatch):
    """These tests post hundreds of records as one user: the API's per-user submission throttle
    (docs/security.md) is lifted here; tests/security checks it."""
    from rest_framework.throttling import SimpleRateThrottle

    rates = {**SimpleRateThrottle.THROTTLE_RATES, "record-submission": None}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
