"""No known SECRET_KEY in production, ``check --deploy`` clean with the production environment,
no ``testserver`` by default, the desk after logging in."""

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k3Y-" + "x9Qz7Lm2" * 8


def _env(**extra):
    """The process environment without anything the test run set for Django, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "SECRET_KEY",
            "DEBUG",
            "HTTPS",
            "ALLOWED_HOSTS",
            "SCOPA_ENTRY_POINT",
            "DJANGO_SETTINGS_MODULE",
        }
        and not k.startswith("SECURE_")
    }
    env.update(extra)
    return env


def _run(args, **env):
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=_env(**env), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_check_deploy_passes_with_the_production_environment():
    result = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        DEBUG="false",
        SECRET_KEY=STRONG_KEY,
        HTTPS="true",
        ALLOWED_HOSTS="tornei.example.org",
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNINGS" not in output and "security.W" not in output, output
    assert "no issues" in output


def test_check_deploy_flags_the_development_key():
    """Without SECRET_KEY the tools still run (migrate, seed_demo), but the check says so."""
    result = _run(
        ["manage.py", "check", "--deploy"], DEBUG="false", HTTPS="true", ALLOWED_HOSTS="x.org"
    )
    assert "security.W009" in result.stdout + result.stderr


def _settings(monkeypatch, **environment):
    """The settings module run afresh in this process with ``environment`` (and nothing the
    test run set for Django): what a server process would load, without starting one."""
    for name in list(os.environ):
        if name not in _env():
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "config" / "settings.py"))


@pytest.mark.parametrize("entry_point", ["config.wsgi", "config.asgi"])
def test_the_entry_points_refuse_to_serve_without_a_secret_key(entry_point):
    """The entry points themselves say they serve the public (a process of its own each)."""
    result = _run(["-c", f"import {entry_point}"], DEBUG="false")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY" in result.stderr


DEVELOPMENT_KEY = "django-insecure-development-only-set-SECRET_KEY-in-production"


@pytest.mark.parametrize(
    ("variable", "key", "said"),
    [
        ("SECRET_KEY", DEVELOPMENT_KEY, "development key"),
        ("SECRET_KEY", "abc", "fewer than 50"),
        ("SECRET_KEY", "ab" * 40, "fewer than 5"),
        ("SECRET_KEY_FALLBACKS", DEVELOPMENT_KEY, "development key"),
        ("SECRET_KEY_FALLBACKS", f"{STRONG_KEY},short", "fewer than 50"),
    ],
)
def test_a_server_refuses_a_known_or_weak_key(monkeypatch, variable, key, said):
    """With DEBUG off a serving process refuses the published development key and a key that
    is short or repetitive, also among the fallbacks, naming the variable."""
    keys = {"SECRET_KEY": STRONG_KEY, variable: key}
    with pytest.raises(ImproperlyConfigured) as refusal:
        _settings(monkeypatch, SCOPA_ENTRY_POINT="wsgi", DEBUG="false", **keys)
    assert variable in str(refusal.value) and said in str(refusal.value)


def test_a_server_starts_on_strong_keys_and_a_development_run_on_any(monkeypatch):
    strong = {"SECRET_KEY": STRONG_KEY, "SECRET_KEY_FALLBACKS": STRONG_KEY[::-1]}
    assert _settings(monkeypatch, SCOPA_ENTRY_POINT="asgi", DEBUG="false", **strong)["SECRET_KEY"]
    # DEBUG on (a development server) and the tools (manage.py, no entry point) keep any key
    assert _settings(monkeypatch, SCOPA_ENTRY_POINT="wsgi", DEBUG="true", SECRET_KEY="abc")
    assert _settings(monkeypatch, DEBUG="false", SECRET_KEY="abc")["SECRET_KEY"] == "abc"


@pytest.mark.parametrize("entry_point", ["config.wsgi", "config.asgi"])
def test_an_entry_point_starts_with_a_strong_key(entry_point):
    fallbacks = {"SECRET_KEY": STRONG_KEY, "SECRET_KEY_FALLBACKS": STRONG_KEY[::-1]}
    result = _run(["-c", f"import {entry_point}"], DEBUG="false", **fallbacks)
    assert result.returncode == 0, result.stderr


def test_production_settings_follow_https():
    code = (
        "from django.conf import settings as s; import django; django.setup(); "
        "print(s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, "
        "s.CSRF_COOKIE_SECURE, s.SECURE_PROXY_SSL_HEADER, s.ALLOWED_HOSTS)"
    )
    result = _run(
        ["-c", code],
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="false",
        SECRET_KEY=STRONG_KEY,
        HTTPS="true",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "31536000 True True True ('HTTP_X_FORWARDED_PROTO', 'https')" in out
    assert "testserver" not in out


def test_csp_header_forbids_inline_scripts(client, db):
    response = client.get("/")
    policy = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"


def test_api_docs_relax_only_styles(client, db):
    response = client.get(reverse("api-docs"))
    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    script_src = next(p for p in policy.split(";") if p.strip().startswith("script-src"))
    assert "unsafe" not in script_src
    assert b"<script>" not in response.content  # the split view serves its script as a file


def test_login_without_next_lands_on_the_desk(client, django_user_model, db):
    django_user_model.objects.create_user("org", password="pw-correct-horse")
    response = client.post(
        reverse("desk:login"), {"username": "org", "password": "pw-correct-horse"}
    )
    assert response.status_code == 302
    assert response.headers["Location"] == reverse("desk:home")


def test_the_browsable_api_relaxes_styles_only_on_its_html(client, db):
    html = client.get("/api/v1/tournaments/", HTTP_ACCEPT="text/html")
    assert html.status_code == 200
    policy = html.headers["Content-Security-Policy"]
    assert "style-src 'self' 'unsafe-inline'" in policy
    assert "script-src 'self';" in policy + ";"
    as_json = client.get("/api/v1/tournaments/", HTTP_ACCEPT="application/json")
    assert "unsafe-inline" not in as_json.headers["Content-Security-Policy"]
