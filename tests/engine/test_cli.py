"""The command-line contract: one JSON line per record in order, exit 0 / 1 / 2 (2 wins)."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from .helpers import clone, sim

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path):
    legal = sim(seed=21)
    illegal = clone(legal)
    illegal["deals"][0]["plays"][0]["seat"] = 1 - illegal["deals"][0]["plays"][0]["seat"]
    paths = {}
    for name, doc in (("legal", legal), ("illegal", illegal)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(doc))
    paths["unreadable"] = tmp_path / "unreadable.json"
    paths["unreadable"].write_text('{"schema": "scopa-match/1", "variant": "scopa", "end": {}')
    return paths


def run(*paths, lang=None):
    out = io.StringIO()
    args = [str(p) for p in paths] + (["--lang", lang] if lang else [])
    try:
        call_command("verify_record", *args, stdout=out)
        status = 0
    except SystemExit as exc:
        status = exc.code
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


def test_all_legal_exit_0(files):
    status, lines = run(files["legal"], files["legal"])
    assert status == 0 and len(lines) == 2 and all(line["valid"] for line in lines)
    line = lines[0]
    for key in ("valid", "errors", "deals", "totals", "winner", "margin", "declared_mismatches"):
        assert key in line
    assert set(line["deals"][0]) >= {"points", "breakdown", "tiebreak"}


def test_one_illegal_exit_1(files):
    status, lines = run(files["legal"], files["illegal"], lang="en")
    assert status == 1
    assert [line["valid"] for line in lines] == [True, False]
    error = lines[1]["errors"][0]
    assert set(error) >= {"deal", "play", "code", "message"}
    assert error["message"].startswith("deal 0, play 0:")


def test_unreadable_wins_over_illegal_exit_2(files):
    status, lines = run(files["unreadable"], files["illegal"], files["legal"])
    assert status == 2 and len(lines) == 3
    assert lines[0]["malformed"] is True and lines[0]["valid"] is False
    assert set(lines[0]["errors"][0]) >= {"code", "message"}
    assert [line["valid"] for line in lines[1:]] == [False, True]


def test_missing_file_is_unreadable(tmp_path):
    status, lines = run(tmp_path / "nope.json")
    assert status == 2 and lines[0]["errors"][0]["code"] == "file_unreadable"


def test_stdin_through_manage_py(files):
    result = subprocess.run(
        [sys.executable, "manage.py", "verify_record", "-", str(files["legal"])],
        input=files["illegal"].read_bytes(),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert result.returncode == 1
    assert [line["valid"] for line in lines] == [False, True]
    assert lines[0]["errors"][0]["message"].startswith("smazzata 0, giocata 0:")


def test_simulate_matches_writes_verifiable_files(tmp_path):
    out = tmp_path / "sim"
    call_command(
        "simulate_matches",
        "--variant",
        "scopa-d-assi",
        "--seats",
        "4",
        "--count",
        "3",
        "--seed",
        "5",
        "--out",
        str(out),
        "--policy",
        "greedy",
        "--deals",
        "2",
        "--knockout",
        stdout=io.StringIO(),
    )
    written = sorted(out.glob("*.json"))
    assert len(written) == 3
    status, lines = run(*written)
    assert status == 0 and all(line["valid"] for line in lines)
    again = tmp_path / "again"
    call_command(
        "simulate_matches",
        "--variant",
        "scopa-d-assi",
        "--seats",
        "4",
        "--count",
        "3",
        "--seed",
        "5",
        "--out",
        str(again),
        "--policy",
        "greedy",
        "--deals",
        "2",
        "--knockout",
        stdout=io.StringIO(),
    )
    assert [p.read_text() for p in written] == [p.read_text() for p in sorted(again.glob("*.json"))]


def test_the_engine_command_line_answers_the_same_without_django(files):
    """`python -m scopa.cli` is verify_record without Django's start-up."""
    paths = [str(files[name]) for name in ("legal", "illegal", "unreadable")]
    result = subprocess.run(
        [sys.executable, "-m", "scopa.cli", *paths, "--lang", "en"],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    status, lines = run(*paths, lang="en")
    assert result.returncode == status == 2
    assert [json.loads(line) for line in result.stdout.decode().splitlines()] == lines
