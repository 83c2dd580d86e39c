"""Which copy of the hot modules runs: the one setup.py compiled with mypyc, or the .py source.

The install compiles the verifier's per-deal modules (setup.py `HOT_MODULES`) into extensions
next to their .py files and writes `_native.json` with the hash of each source it compiled. The
package's `__init__` calls `select()` before importing anything else, and the .py source runs
instead of the compiled copy when:

- `SCOPA_ENGINE_PURE=1` is set (to compare, to debug with pdb, to profile with cProfile);
- nothing was compiled (no compiler at install, `SCOPA_ENGINE_COMPILE=0`, another interpreter);
- a source changed since the build (an edit in an editable install runs at once, until the next
  `pip install -e .` compiles it again) or the compiled library does not load.

`load_source_copy` imports a second, source-only copy of the whole package under another name,
for the test that runs a corpus through both and compares the answers.
"""

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from types import ModuleType

logger = logging.getLogger(__name__)

PACKAGE = __name__.rpartition(".")[0]
DIRECTORY = Path(__file__).resolve().parent
PURE_ENV = "SCOPA_ENGINE_PURE"
MANIFEST = DIRECTORY / "_native.json"
SHARED_LIBRARY = "_native__mypyc"  # setup.py's mypyc group

# Why the source runs instead of the compiled modules (None: the compiled ones run); set once by
# select().
pure_reason: str | None = None


class SourceFinder(importlib.abc.MetaPathFinder):
    """Finds `<package>.<module>` as `<directory>/<module>.py` only, never an extension."""

    def __init__(self, package: str, directory: Path) -> None:
        self.package = package
        self.directory = directory

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        parent, _, name = fullname.rpartition(".")
        source = self.directory / f"{name}.py"
        if parent != self.package or not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def _compiled_problem() -> str | None:
    """Why the compiled modules cannot be used, or None when they are present and current."""
    try:
        manifest = json.loads(MANIFEST.read_text())
    except FileNotFoundError:
        return "not compiled at install"
    except (OSError, ValueError) as exc:
        return f"unreadable {MANIFEST.name}: {exc}"
    for name, digest in manifest.get("sources", {}).items():
        try:
            current = hashlib.sha256((DIRECTORY / f"{name}.py").read_bytes()).hexdigest()
        except OSError:
            return f"{name}.py is missing"
        if current != digest:
            return f"{name}.py changed since it was compiled"
    try:
        importlib.import_module(f"{PACKAGE}.{SHARED_LIBRARY}")
    except ImportError as exc:
        return f"the compiled library does not load: {exc}"
    return None


def select() -> None:
    """Decide once, before the package imports its modules, which copy they come from."""
    global pure_reason
    # (by name: the finder may come from another copy of this module, see load_source_copy)
    if any(
        type(f).__name__ == "SourceFinder" and getattr(f, "package", None) == PACKAGE
        for f in sys.meta_path
    ):
        pure_reason = "loaded from source (load_source_copy)"
        return
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        pure_reason = f"{PURE_ENV} is set"
    else:
        pure_reason = _compiled_problem()
        if pure_reason is not None and MANIFEST.exists():
            logger.warning("scopa engine: running the pure-Python modules: %s", pure_reason)
    if pure_reason is not None:
        sys.meta_path.insert(0, SourceFinder(PACKAGE, DIRECTORY))


def compiled() -> bool:
    """True when the verifier's hot loop runs compiled."""
    module = sys.modules.get(f"{PACKAGE}.verify")
    return module is not None and not (module.__file__ or "").endswith(".py")


def load_source_copy(name: str) -> ModuleType:
    """Import the whole engine again from its .py files as package `name` (for comparisons)."""
    if name in sys.modules:
        return sys.modules[name]
    sys.meta_path.insert(0, SourceFinder(name, DIRECTORY))
    spec = importlib.util.spec_from_file_location(
        name, DIRECTORY / "__init__.py", submodule_search_locations=[str(DIRECTORY)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# On import: the package imports this module before any other of its own (see __init__).
select()
