"""The project's apps are named alike everywhere that lists them: settings, the wheel's package
list, ruff's first-party list, the layers' contracts and the README's layout table. An app left
out of one of them ships without its code, sorts its imports as a third party's, escapes the
layer checks or is missing from the map a newcomer reads."""

import re
import tomllib
from pathlib import Path

from django.apps import apps
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
ENGINE = "scopa"  # pure Python, no Django app: not in INSTALLED_APPS
TOP_LEVEL = "config"  # settings, URLs, the Celery app: a package, no Django app


def _project_apps() -> set[str]:
    return {
        config.name
        for config in apps.get_app_configs()
        if (ROOT / config.name.split(".")[0]).is_dir() and "." not in config.name
    }


def test_settings_list_every_app_of_the_tree():
    packages = {
        path.parent.name
        for path in ROOT.glob("*/apps.py")
        if (path.parent / "__init__.py").is_file()
    }
    assert packages == _project_apps()


def test_the_wheel_packages_every_app_the_engine_and_config():
    included = {
        pattern.rstrip("*")
        for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    assert included == _project_apps() | {ENGINE, TOP_LEVEL}


def test_ruff_and_the_import_contracts_know_every_package():
    expected = _project_apps() | {ENGINE, TOP_LEVEL}
    first_party = PYPROJECT["tool"]["ruff"]["lint"]["isort"]["known-first-party"]
    assert set(first_party) == expected
    assert set(PYPROJECT["tool"]["importlinter"]["root_packages"]) == expected
    layered = set()
    for contract in PYPROJECT["tool"]["importlinter"]["contracts"]:
        if contract.get("containers"):
            continue  # the modules of one package, layered inside it
        for layer in contract.get("layers", []):
            layered |= {name.strip() for name in re.split(r"[|:]", layer)}
    assert layered == expected


def test_the_readme_layout_table_names_every_package():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `([a-z_]+)/` \|", section, flags=re.M))
    assert _project_apps() | {ENGINE, TOP_LEVEL} <= named


def test_the_wheel_carries_templates_static_files_and_catalogs():
    data = PYPROJECT["tool"]["setuptools"]["package-data"]["*"]
    for folder in ("templates", "static", "locale"):
        assert f"{folder}/**/*" in data
    for folder in settings.LOCALE_PATHS:
        assert Path(folder).is_relative_to(ROOT / TOP_LEVEL)
    assert not settings.TEMPLATES[0]["DIRS"], "templates outside an app are not package data"
    assert not getattr(settings, "STATICFILES_DIRS", []), "static files outside an app"
