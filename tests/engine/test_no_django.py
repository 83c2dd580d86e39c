"""scopa must stay importable without Django (workers, notebooks, other platforms)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_imports_no_django():
    code = (
        "import sys, scopa as e; "
        "e.verify_document(e.simulate_match(seed=1)); "
        "print('django' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
