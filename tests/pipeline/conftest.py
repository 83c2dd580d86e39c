"""Real Celery workers on a real broker and PostgreSQL, started here, not mocked.

The fixtures start a private ``redis-server`` on ``SCOPA_TEST_REDIS_PORT`` (so the shared Redis
keeps running for everyone else and an outage can be staged by stopping it), point this
process's Celery app at the test's broker, and start ``celery -A config worker --pool prefork
-c 2`` subprocesses whose ``DATABASE_URL`` names pytest-django's test database. Tests use
``transactional_db`` so the workers see committed rows.

Each test runs on one broker (``broker_kind``): RabbitMQ when ``SCOPA_TEST_BROKER_URL`` names
one that answers, else the private Redis; the fault tests are parametrized over both
(``BOTH_BROKERS``). A test that restarts PostgreSQL runs on a private server of its own
(``private_postgres``), as a test that stops Redis does.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config.broker import amqp_options, is_amqp
from config.celery import app as celery_app
from tests.conftest import database_as_found

ROOT = Path(__file__).resolve().parents[2]
REDIS_PORT = int(os.environ.get("SCOPA_TEST_REDIS_PORT", "6390"))
# SCOPA_TEST_BROKER_URL=amqp://guest:guest@127.0.0.1:5672/<vhost> runs these tests on RabbitMQ
# (in a vhost of the session's own, ``<vhost>_p<pid>``, when rabbitmqctl is at hand; see
# ``amqp_vhost``); otherwise on a private redis-server that the tests can stop and start.
AMQP_URL = os.environ.get("SCOPA_TEST_BROKER_URL", "")


def _amqp_reachable(url):
    """RabbitMQ answers on the URL's host and port (else the tests fall back to Redis)."""
    from kombu.utils.url import url_to_parts

    parts = url_to_parts(url)
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((parts.hostname or "127.0.0.1", parts.port or 5672)) == 0


AMQP_AVAILABLE = is_amqp(AMQP_URL) and _amqp_reachable(AMQP_URL)
REDIS_AVAILABLE = shutil.which("redis-server") is not None
# The broker of the tests that do not ask for both.
USE_AMQP = AMQP_AVAILABLE
REDIS_BROKER_URL = f"redis://127.0.0.1:{REDIS_PORT}/0"

# Fault tests run on each broker that is at hand, one after the other.
BOTH_BROKERS = pytest.mark.parametrize(
    "broker_kind",
    [
        pytest.param(
            "amqp",
            marks=pytest.mark.skipif(
                not AMQP_AVAILABLE, reason="SCOPA_TEST_BROKER_URL names no RabbitMQ that answers"
            ),
        ),
        pytest.param(
            "redis",
            marks=pytest.mark.skipif(not REDIS_AVAILABLE, reason="redis-server is not installed"),
        ),
    ],
)


def _skip_reason():
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        return "pipeline tests need DATABASE_URL to name PostgreSQL"
    if not os.environ.get("CELERY_BROKER_URL"):
        return "pipeline tests need CELERY_BROKER_URL (a Redis broker)"
    if not USE_AMQP and not REDIS_AVAILABLE:
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


def _vhost_answers(url, timeout=5):
    """The vhost lets this process in and gives back a message it took, within ``timeout``
    seconds. A handshake alone is not enough: a RabbitMQ under a resource alarm accepts
    connections and then blocks them, so the check runs in a thread that may be left behind."""
    import threading

    from kombu import Connection

    answered = threading.Event()

    def round_trip():
        with contextlib.suppress(Exception), Connection(url, connect_timeout=timeout) as conn:
            channel = conn.channel()
            queue = channel.queue_declare("", exclusive=True, auto_delete=True).queue
            channel.basic_publish(channel.prepare_message(b"ping"), "", queue)
            while not answered.is_set() and channel.basic_get(queue, no_ack=True) is None:
                time.sleep(0.05)
            answered.set()

    threading.Thread(target=round_trip, daemon=True).start()
    return answered.wait(timeout)


def _purge(url):
    """Empty the tests' queue on the broker at ``url``: the private Redis is flushed whole (its
    unacknowledged messages too); RabbitMQ's ``celery`` queue is purged once it has no consumer
    left, so what killed workers held unacknowledged is back in it and goes too."""
    from kombu import Connection

    with contextlib.suppress(Exception):
        if is_amqp(url):
            with Connection(url, connect_timeout=5) as conn:
                channel = conn.default_channel
                deadline = time.monotonic() + 10
                while (
                    channel.queue_declare("celery", passive=True).consumer_count
                    and time.monotonic() < deadline
                ):
                    time.sleep(0.05)
                channel.queue_purge("celery")
        else:
            import redis

            redis.Redis.from_url(url, socket_connect_timeout=5).flushdb()


# A vhost of this test session's own, ``<vhost>_p<pid>``: a vhost that an earlier run left
# behind half deleted, full or wedged (a run killed mid fault test, a node that did not finish
# dropping its quorum queues) cannot make this run's workers wait on it.
SESSION_VHOST_MARK = "_p"


def _session_url(url):
    base, vhost = url.rsplit("/", 1)
    return f"{base}/{vhost or 'scopa_test'}{SESSION_VHOST_MARK}{os.getpid()}"


def _rabbitmqctl_later(*args):
    """Run rabbitmqctl without waiting for it (it costs 1-3 s a call): cleaning up is not on
    any test's path."""
    subprocess.Popen(
        ["rabbitmqctl", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _forget_dead_sessions_vhosts(url):
    """Delete the vhosts that earlier sessions of this base name left behind (their process is
    gone: killed runs never reach their teardown)."""
    prefix = url.rsplit("/", 1)[-1].rsplit(SESSION_VHOST_MARK, 1)[0] + SESSION_VHOST_MARK
    done = subprocess.run(
        ["rabbitmqctl", "list_vhosts", "-q", "--no-table-headers"],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    for vhost in done.stdout.decode(errors="replace").split():
        pid = vhost[len(prefix) :]
        if vhost.startswith(prefix) and pid.isdigit() and not _process_alive(int(pid)):
            _rabbitmqctl_later("delete_vhost", vhost)


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _rabbitmq_state():
    done = subprocess.run(["rabbitmqctl", "status"], capture_output=True, timeout=60, check=False)
    text = done.stdout.decode(errors="replace")
    start = text.find("Alarms")
    return text[start : start + 400] if start >= 0 else text[:400]


@pytest.fixture(scope="session")
def amqp_vhost():
    """The session's own vhost (created here, deleted at the end), checked to take a message
    before any worker starts: a RabbitMQ that does not answer fails its tests at once, with its
    alarms, instead of leaving every test to wait out its workers' reconnection loop."""
    if not shutil.which("rabbitmqctl"):
        # a RabbitMQ elsewhere: the vhost the URL names, emptied of an earlier run
        _purge(AMQP_URL)
        yield AMQP_URL
        return
    url = _session_url(AMQP_URL)
    vhost = url.rsplit("/", 1)[-1]
    _forget_dead_sessions_vhosts(url)
    for cmd in (
        ["rabbitmqctl", "add_vhost", vhost],
        ["rabbitmqctl", "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"],
    ):
        subprocess.run(cmd, capture_output=True, timeout=60, check=False)
    if not _vhost_answers(url, timeout=15):
        pytest.fail(f"RabbitMQ does not take a message on {vhost}:\n{_rabbitmq_state()}")
    yield url
    _rabbitmqctl_later("delete_vhost", vhost)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
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


class Broker:
    """The test's broker: its kind, its URL and, for the private Redis, its server."""

    def __init__(self, kind, url, server=None):
        self.kind = kind
        self.url = url
        self.server = server
        self.down = False

    @property
    def vhost(self):
        return self.url.rsplit("/", 1)[-1]

    def stop(self):
        """The broker goes away with everything it held: publishing fails, every connection is
        cut, and it comes back (``start``) empty.

        The private Redis is stopped (it keeps nothing on disk). The shared RabbitMQ cannot be
        stopped by a test, and its quorum queues would keep their messages over a restart
        anyway: the tests' vhost is deleted, which cuts every connection to it, refuses new
        ones and drops its queues with their messages, ready and unacknowledged alike."""
        self.down = True
        if self.server is not None:
            self.server.stop()
        else:
            _rabbitmqctl("delete_vhost", self.vhost)

    def start(self):
        if self.server is not None:
            self.server.start()
        else:
            _rabbitmqctl("add_vhost", self.vhost)
            _rabbitmqctl("set_permissions", "-p", self.vhost, "guest", ".*", ".*", ".*")
        self.down = False

    def cut_connections(self):
        """RabbitMQ closes every connection to the test's vhost, as a network cut or a broker
        node going away would; the queues and their messages stay."""
        _rabbitmqctl("close_all_connections", "-p", self.vhost, "fault test")


def _rabbitmqctl(*args):
    if not shutil.which("rabbitmqctl"):
        pytest.skip("rabbitmqctl is not installed")
    done = subprocess.run(["rabbitmqctl", *args], capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")


@pytest.fixture
def broker_kind():
    """``amqp`` or ``redis``; ``BOTH_BROKERS`` parametrizes it."""
    return "amqp" if USE_AMQP else "redis"


@pytest.fixture
def broker(request, broker_kind):
    """This process publishes to the test's broker for the test's duration."""
    if broker_kind == "amqp":
        current = Broker("amqp", request.getfixturevalue("amqp_vhost"))
    else:
        current = Broker("redis", REDIS_BROKER_URL, request.getfixturevalue("redis_server"))
    names = ["broker_write_url", "task_always_eager"]
    options = amqp_options() if current.kind == "amqp" else {}
    names += [n for n in options if n not in names]
    saved = {name: celery_app.conf.get(name) for name in names}
    celery_app.conf.update(broker_write_url=current.url, task_always_eager=False, **options)
    _reset_producer_pool()
    yield current
    if current.down:
        # a test that failed with its broker away leaves the next tests a broker
        current.start()
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

    def __init__(self, logdir, broker_url):
        self.logdir = logdir
        self.broker_url = broker_url
        self.procs = []

    def start(
        self, *, beat=False, sweep_every_s=1.0, pending_after_s=3.0, database_url=None, poison=False
    ):
        env = dict(os.environ)
        env.update(
            DATABASE_URL=database_url or test_database_url(),
            CELERY_BROKER_URL=self.broker_url,
            SCOPA_SWEEP_EVERY_S=str(sweep_every_s),
            SCOPA_RATING_SWEEP_EVERY_S=str(sweep_every_s),
            SCOPA_RATING_DEBOUNCE_S="1",
            # small batches: the writer clears a batch of 50 in a blink, and the fault tests
            # must catch the workers with records still under way (a wake-up's batch too,
            # four times as big by default: a burst of 66 was then over in six batches)
            GAMES_VERIFY_BATCH_SIZE="3",
            GAMES_WAKE_BATCH_SIZE="3",
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

    def pause(self):
        """Freeze every worker (SIGSTOP to their process groups) with whatever it holds: a
        fault staged meanwhile hits work under way, however quick the burst. A frozen worker
        is only slow (a long pause of its machine), which changes nothing by itself."""
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGSTOP)

    def resume(self):
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGCONT)

    def stop_all(self):
        """The end of a test, its checks done: every worker goes at once with its pool children
        (SIGKILL; Celery's warm shutdown takes 1.5-2.5 s a worker even when idle), then the
        broker's queue is emptied, so no message of this test (a sweep from beat, a debounced
        rating, what a killed worker held) reaches the next test's workers."""
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        for proc in self.procs:
            proc.wait(30)
        _purge(self.broker_url)

    def logs(self):
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in self.logdir.glob("*.log"))


PG_BIN = Path(os.environ.get("SCOPA_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


class PostgresServer:
    """A private PostgreSQL (initdb into a folder of its own, trust auth, a free port) that a
    test can restart; run as the ``postgres`` user when the tests run as root, which
    PostgreSQL refuses."""

    def __init__(self, folder, port):
        self.folder = folder
        self.data = folder / "data"
        self.port = port
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *cmd, timeout=60):
        done = subprocess.run(
            [*self.as_user, *cmd], capture_output=True, timeout=timeout, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {done.stderr.decode(errors='replace')}")
        return done

    def init(self):
        if self.as_user:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip

    def _ctl(self, action, *extra):
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
            "-w", "-t", "60", "-o", options, action, *extra,
        )  # fmt: skip

    def start(self):
        self._ctl("start")

    def stop(self, mode="fast"):
        """``fast``: every session is ended at once (clients see their connection go), what a
        restart by the operator or the service manager does."""
        self._ctl("stop", "-m", mode)

    def psql(self, *args, database="postgres"):
        self._run(
            str(PG_BIN / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
            "-p", str(self.port), "-U", "postgres", "-d", database, *args,
        )  # fmt: skip

    def url(self, name):
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def log(self):
        path = self.folder / "log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server():
    if not (PG_BIN / "pg_ctl").exists():
        pytest.skip(f"no PostgreSQL binaries in {PG_BIN}; set SCOPA_TEST_PG_BIN")
    # Not under pytest's tmp folder: the postgres user (tests run as root) cannot enter it.
    folder = Path(tempfile.mkdtemp(prefix="scopa-test-pg-"))
    server = PostgresServer(folder, _free_port())
    try:
        server.init()
        server.start()
        yield server
    finally:
        with contextlib.suppress(Exception):
            server.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def private_postgres(transactional_db, postgres_server, broker_kind):
    """A database on the private server, a copy of the (just flushed) test database, which this
    process and the workers use for the test's duration.

    The copy is ``pg_dump``'s (schema and the rows migrations and ``flush`` leave: content types,
    the ratings' lock row), so ids match the ones this process has cached; this process's
    default connection points at it until the test ends, then back at the test database (which
    pytest-django flushes as usual)."""
    name = f"scopa_fault_{broker_kind}"
    dump = postgres_server.folder / f"{name}.sql"
    db = connection.settings_dict
    subprocess.run(
        [
            str(PG_BIN / "pg_dump"), "--no-owner", "--no-privileges", "-f", str(dump),
            "-h", db["HOST"] or "127.0.0.1", "-p", str(db["PORT"] or 5432),
            "-U", db["USER"] or "postgres", db["NAME"],
        ],
        env={**os.environ, "PGPASSWORD": db["PASSWORD"] or ""},
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    dump.chmod(0o644)
    postgres_server.psql("-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    postgres_server.psql("-c", f"CREATE DATABASE {name}")
    postgres_server.psql("-f", str(dump), database=name)
    saved = dict(db)
    connection.close()
    db.update(HOST="127.0.0.1", PORT=postgres_server.port, NAME=name, USER="postgres", PASSWORD="")
    yield postgres_server
    connection.close()
    db.clear()
    db.update(saved)


@pytest.fixture(scope="module", autouse=True)
def _leave_the_database_as_found(django_db_setup, django_db_blocker):
    """The workers need committed rows, so these tests are transactional and every table is
    emptied after each; put back what was there before (the migrations' VP tables, the ratings'
    lock row), so the tests an xdist worker runs after this group still find it."""
    with database_as_found(django_db_blocker):
        yield


@pytest.fixture
def workers(transactional_db, broker, tmp_path):
    pool = Workers(tmp_path, broker.url)
    yield pool
    pool.stop_all()


@pytest.fixture(autouse=True)
def unthrottled_submissions(monkeypatch):
    """These tests post hundreds of records as one user: the API's per-user submission throttle
    (docs/security.md) is lifted here; tests/security checks it."""
    from rest_framework.throttling import SimpleRateThrottle

    rates = {
        **SimpleRateThrottle.THROTTLE_RATES,
        "record-submission": None,
        "record-batch": None,
    }
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
