"""Install-time build of the engine's compiled hot loop (everything else is in pyproject.toml).

`pip install .` and `pip install -e .` compile the verifier's hot modules (`HOT_MODULES`) with
mypyc into C extensions placed next to their .py files. The build is optional: when mypyc cannot
translate the code, or no C compiler is found, or `SCOPA_ENGINE_COMPILE=0` is set, the install
warns and goes on, and the engine runs the same .py files (see scopa/native.py, which
also refuses a compiled copy older than its source).
"""

import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path

from setuptools import Distribution, Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
ENGINE = Path("scopa")
# The verifier's per-deal path: replay, deal state, legality checks, scoring, the match-end rule.
# scopa/native.py reads the same list from the manifest written below.
HOT_MODULES = ("verify", "state", "rules", "scoring", "match_end")
MANIFEST = "_native.json"  # written next to the extensions: what was compiled, from which source
GROUP = "scopa._native"  # mypyc's shared library: scopa/_native__mypyc.*.so


def _source_hashes() -> dict[str, str]:
    return {
        name: hashlib.sha256((ROOT / ENGINE / f"{name}.py").read_bytes()).hexdigest()
        for name in HOT_MODULES
    }


def _warn(message: str) -> None:
    print(f"warning: scopa engine: {message}; the pure-Python engine will be used", file=sys.stderr)


class OptionalMypycBuild(build_ext):
    """Translate the hot modules when `build_ext` is set up, compile them when it runs; a failure
    at either step only warns.

    mypyc is called here rather than at the top of setup.py, so the metadata steps of an
    install (which also run setup.py) do not pay for a mypy run each.
    """

    def finalize_options(self) -> None:
        if getattr(self, "editable_mode", False) and self._in_place_current():
            # `pip install -e .` again (CI installs twice): the modules in the tree are current
            print("scopa engine: compiled hot loop up to date", file=sys.stderr)
            self.distribution.ext_modules = []
        else:
            self.distribution.ext_modules = self._translate()
        super().finalize_options()

    @staticmethod
    def _in_place_current() -> bool:
        """True when the tree holds extensions compiled from the current sources by this mypy."""
        try:
            import mypy.version

            manifest = json.loads((ROOT / ENGINE / MANIFEST).read_text())
        except (ImportError, OSError, ValueError):
            return False
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = [*HOT_MODULES, GROUP.rpartition(".")[2] + "__mypyc"]
        return (
            manifest.get("mypy") == mypy.version.__version__
            and manifest.get("sources") == _source_hashes()
            and all((ROOT / ENGINE / f"{name}{suffix}").is_file() for name in built)
        )

    def _translate(self) -> list[Extension]:
        if os.environ.get("SCOPA_ENGINE_COMPILE", "1") == "0":
            _warn("SCOPA_ENGINE_COMPILE=0, nothing compiled")
            return []
        work = ROOT / "build" / "mypyc"
        work.mkdir(parents=True, exist_ok=True)
        # Only the engine's own settings: pyproject's [tool.mypy] names Django plugins that the
        # isolated build environment does not have (the engine needs only msgspec).
        config = work / "mypy.ini"
        config.write_text("[mypy]\npython_version = 3.11\n")
        cwd = os.getcwd()
        os.chdir(ROOT)  # mypyc names modules after paths relative to the working directory
        try:
            from mypyc.build import mypycify

            return mypycify(
                ["--config-file", str(config)]
                + [str(ENGINE / f"{name}.py") for name in HOT_MODULES],
                group_name=GROUP,
                target_dir=str(work),
                opt_level="3",
            )
        except (Exception, SystemExit) as exc:
            _warn(f"mypyc could not translate the hot modules ({type(exc).__name__}: {exc})")
            return []
        finally:
            os.chdir(cwd)

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except (Exception, SystemExit) as exc:  # a failed compile leaves no half-built engine
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            self._manifest_path().unlink(missing_ok=True)  # an older build's, now without modules
            _warn(f"compiled hot loop not built ({type(exc).__name__}: {exc})")
            self.extensions = []
            return
        self._write_manifest()

    def _manifest_path(self) -> Path:
        return Path(self.get_ext_fullpath(f"scopa.{HOT_MODULES[0]}")).parent / MANIFEST

    def _write_manifest(self) -> None:
        import mypy.version

        manifest = {"mypy": mypy.version.__version__, "python": sys.version.split()[0]}
        manifest["sources"] = _source_hashes()
        self._manifest_path().write_text(json.dumps(manifest, indent=1))

    def get_outputs(self) -> list[str]:
        outputs = list(super().get_outputs())
        return [*outputs, str(self._manifest_path())] if self.extensions else outputs


class BinaryDistribution(Distribution):
    """The wheel carries extensions (built for this interpreter) whenever they could be built."""

    def has_ext_modules(self) -> bool:
        return os.environ.get("SCOPA_ENGINE_COMPILE", "1") != "0"


setup(cmdclass={"build_ext": OptionalMypycBuild}, distclass=BinaryDistribution)
