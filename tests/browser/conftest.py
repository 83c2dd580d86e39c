"""Headless Chromium (Debian's package) driven by Playwright against pytest-django's live server.

Skipped with a reason when Chromium is not installed; CI installs it. Never runs
``playwright install``: the system browser is used through ``executable_path``.
"""

import os
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands

from tests.conftest import database_as_found

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(scope="module", autouse=True)
def _leave_the_database_as_found(django_db_setup, django_db_blocker):
    """The live server needs committed data, so these tests are transactional and every table is
    emptied after each; put back what was there before (the migrations' VP tables and such),
    so later tests in the session still find it."""
    with database_as_found(django_db_blocker):
        yield


# Every page any browser test opens reports its Content-Security-Policy violations here; a test
# that saw one fails (the projector's htmx <style>, the admin's style=).
CSP_VIOLATIONS: list[str] = []
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", function (e) {
  window.__scopaCspViolation([e.violatedDirective, e.blockedURI || "inline",
    e.sourceFile || "", e.lineNumber, (e.sample || "").slice(0, 80)].join(" "));
}, true);
"""


def watch_csp(context):
    """Record the CSP violations of every page of ``context`` (before any page script runs)."""
    context.expose_binding(
        "__scopaCspViolation",
        lambda source, text: CSP_VIOLATIONS.append(f"{source['page'].url}: {text}"),
    )
    context.add_init_script(CSP_LISTENER)
    return context


class _WatchedBrowser:
    """The browser, whose every new context reports CSP violations (``watch_csp``)."""

    def __init__(self, browser):
        self._browser = browser

    def new_context(self, **options):
        return watch_csp(self._browser.new_context(**options))

    def __getattr__(self, name):
        return getattr(self._browser, name)


def settle_csp_reports(context):
    """Let reports still on their way from the pages of ``context`` arrive (before closing it)."""
    for page in context.pages:
        if not page.is_closed():
            page.wait_for_timeout(50)


@pytest.fixture(autouse=True)
def _no_csp_violation():
    """Fail a browser test on any CSP violation of a page it visited."""
    CSP_VIOLATIONS.clear()
    yield
    found, CSP_VIOLATIONS[:] = list(CSP_VIOLATIONS), []
    assert not found, "Content-Security-Policy violations:\n" + "\n".join(found)


@pytest.fixture(scope="module")
def browser():
    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not executable:
        pytest.skip("Chromium is not installed here (apt-get install -y chromium); CI installs it")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
    # between page actions are still plain synchronous calls.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield _WatchedBrowser(chromium)
        chromium.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page_factory(browser, live_server):
    """New pages at a given viewport and locale, closed after the test."""
    contexts = []

    def make(width=1200, height=900, locale="it-IT"):
        context = browser.new_context(
            viewport={"width": width, "height": height},
            locale=locale,
            base_url=live_server.url,
        )
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        settle_csp_reports(context)
        context.close()


def _demo_from_factories():
    from tests.pages.factories import add_verified_record, build_tournament, play_stage
    from tournaments.models import Match
    from tournaments.services import schedule

    tournament = build_tournament(16, slug="demo", groups=4)
    schedule.close_stage(tournament.stages.get(order=1), per_group=2)
    knockout = tournament.stages.get(order=2)
    play_stage(knockout, limit=4)
    semi = Match.objects.filter(
        round__stage=knockout, home__isnull=False, away__isnull=False, status="scheduled"
    ).first()
    add_verified_record(semi, seed=7)
    return tournament


def _ensure_a_replay(tournament):
    """seed_demo stores verdicts but (so far) no Submission rows: give one group match a
    standing verified record, so the replay viewer has something to step through."""
    from games.models import Submission
    from tests.pages.factories import add_verified_record, reopen_stage
    from tournaments.models import Match
    from tournaments.services import results

    if Submission.objects.filter(
        match__round__stage__tournament=tournament,
        result_versions__status="in_force",
        state="verified",
    ).exists():
        return
    match = (
        Match.objects.filter(round__stage__tournament=tournament, group__isnull=False)
        .exclude(away__isnull=True)
        .order_by("round__number", "table_number")
        .first()
    )
    stage = match.round.stage
    status = stage.status
    reopen_stage(stage)
    results.delete_result(match)
    add_verified_record(match, seed=7)
    type(stage).objects.filter(pk=stage.pk).update(status=status)


@pytest.fixture
def demo(transactional_db, live_server):
    """The public demo tournament of ``seed_demo`` (or a look-alike until it exists)."""
    from django.core.cache import cache

    from tournaments.models import Tournament, VPTable
    from tournaments.services.vp import load_default_tables

    cache.clear()
    if not VPTable.objects.exists():  # a previous live-server test flushed the migration's rows
        load_default_tables()
    if "seed_demo" in get_commands():
        call_command("seed_demo", verbosity=0)
        tournament = Tournament.objects.filter(is_public=True).order_by("-id").first()
        _ensure_a_replay(tournament)
    else:
        tournament = _demo_from_factories()
    yield tournament
    cache.clear()


def save_screenshot(page, name, *, region=None, height=None):
    """Write docs/screenshots/<name>.png when SAVE_SCREENSHOTS=1 (the README shows them).

    The whole page by default; ``region`` (a CSS selector) keeps only its first element, and
    ``height`` only the top that many pixels (of the region, or of the page), so a page with 48
    lines makes a small picture."""
    if os.environ.get("SAVE_SCREENSHOTS") != "1":
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = str(SCREENSHOTS / f"{name}.png")
    if region is None and height is None:
        page.screenshot(path=path, full_page=True)
        return
    if region is None:
        box = {"x": 0, "y": 0, "width": page.viewport_size["width"], "height": height}
    else:
        box = page.locator(region).first.bounding_box()
        box["y"] += page.evaluate("window.scrollY")
        box["x"] += page.evaluate("window.scrollX")
    if height is not None:
        box["height"] = min(box["height"], height)
    page.screenshot(path=path, full_page=True, clip=box)


def cache_static(page):
    """Serve each static file to ``page``'s context from memory after its first load.

    The live server sends static files without cache headers, so Chromium fetched the same four
    files again on every page; a test that opens a hundred pages spent seconds on them."""
    cache = {}

    def serve(route):
        url = route.request.url
        if url not in cache:
            response = route.fetch()
            cache[url] = {
                "status": response.status,
                "headers": response.headers,
                "body": response.body(),
            }
        route.fulfill(**cache[url])

    page.context.route("**/static/**", serve)
    return page
