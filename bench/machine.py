"""What the benchmarks share: the machine they report, and the throwaway servers they start."""

import os
import platform
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


def cpu_model() -> str:
    """The CPU's model name, for the "machine" line every benchmark prints."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages: on a shared machine, every figure's context."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def engine_build() -> str:
    """Which engine runs: the compiled modules or the .py source, and why (a tree checked out
    beside this one runs its source unless its own install compiled it): the engine's figures,
    and every ratio to them, depend on it."""
    from scopa import native

    if native.pure_reason is None:
        return "compiled (mypyc)"
    return f".py source ({native.pure_reason})"


def database_url(name: str) -> str:
    """``DATABASE_URL`` with another database name (a benchmark's own throwaway database)."""
    url = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(url._replace(path="/" + name))


@contextmanager
def throwaway_database() -> Iterator[str]:
    """A fresh ``test_<name>`` database for the benchmark's own rows (Django's test database of
    the settings' one), dropped afterwards whatever happens; yields its name."""
    from django.db import connection

    old_name = connection.settings_dict["NAME"]
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield name
    finally:
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, deadline: float, server: str) -> None:
    """Wait until something listens on ``port`` of loopback, or give up at ``deadline``."""
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{server} did not listen on {port} in time")
