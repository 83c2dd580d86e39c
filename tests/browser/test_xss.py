"""Names are escaped wherever a visitor sees them: an XSS corpus in every name, checked in
Chromium.

Player, line, seat (a legal record's), group, stage and tournament names carry quotes,
``</script>``, ``javascript:`` URLs, SVG/IMG handlers, RTL overrides and the attribute break-out
``x" autofocus onfocus=...`` that ran on the replay viewer. Every page that shows them is opened;
no injected script may run (``window.__xss`` stays 0, no dialog) and the page must not need an
inline script the Content-Security-Policy would block (no ``securitypolicyviolation``).
"""

import datetime
import itertools

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tournaments.models import (
    Entry,
    Group,
    Line,
    LineMember,
    Match,
    Player,
    Stage,
    Tournament,
    VPTable,
)

pytestmark = pytest.mark.browser

CORPUS = [
    'x" autofocus tabindex="0" onfocus="window.__xss=1" y="',
    "x' autofocus tabindex='0' onfocus='window.__xss=2' y='",
    "</script><script>window.__xss=3</script>",
    '"><img src=x onerror="window.__xss=4">',
    "<svg onload=window.__xss=5><script>alert(5)</script></svg>",
    "javascript:window.__xss=6",
    "\u202eevil\u202c<b onmouseover=window.__xss=7>rtl</b>",
    "{{ 7|add:1 }}<iframe src=javascript:window.__xss=8>",
]

SENTINEL = """
window.__xss = 0;
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || ""));
});
"""


def _names(prefix):
    """An endless supply of corpus strings, each tagged so names stay unique."""
    for n, payload in enumerate(itertools.cycle(CORPUS)):
        yield f"{prefix}{n} {payload}"


@pytest.fixture
def xss_tournament(transactional_db, live_server):
    from django.core.cache import cache

    from games.models import Submission, content_hash
    from scopa import simulate_match, verify_document
    from tests.pages.factories import play_stage, reopen_stage
    from tournaments.services import results, schedule
    from tournaments.services.vp import load_default_tables

    cache.clear()
    if not VPTable.objects.filter(slug="points-11").exists():
        load_default_tables()
    names = _names("")
    tournament = Tournament.objects.create(
        slug="xss",
        name="Torneo " + CORPUS[0],
        start_date=datetime.date(2026, 5, 9),
        venue=CORPUS[2],
        status=Tournament.Status.RUNNING,
        is_public=True,
        vp_table=VPTable.objects.get(slug="points-11"),
        end_rule="target",
        end_value=11,
    )
    players = _names("P")
    lines = _names("L")
    for seed in range(1, 9):
        player = Player.objects.create(name=next(players)[:120], city=CORPUS[5], club=CORPUS[3])
        line = Line.objects.create(name=next(lines)[:160])
        LineMember.objects.create(line=line, player=player, position=0)
        Entry.objects.create(tournament=tournament, line=line, seed=seed)
    groups = Stage.objects.create(
        tournament=tournament, order=1, name=("G " + CORPUS[1])[:120], kind="round_robin"
    )
    knockout = Stage.objects.create(
        tournament=tournament,
        order=2,
        name=("K " + CORPUS[4])[:120],
        kind="knockout",
        third_place_match=True,
    )
    schedule.create_groups(groups, 2)
    for group, name in zip(groups.groups.all(), names, strict=False):
        Group.objects.filter(pk=group.pk).update(name=name[:40])
    schedule.generate_round_robin(groups)
    play_stage(groups)
    schedule.close_stage(groups, per_group=2)
    play_stage(knockout, limit=2)
    # a legal record whose seats carry the corpus becomes a group match's result
    match = (
        Match.objects.filter(round__stage=groups, away__isnull=False)
        .order_by("round__number", "table_number")
        .first()
    )
    reopen_stage(groups)
    results.delete_result(match)
    document = simulate_match(end=tournament.match_end(), seed=11)
    document["seats"] = [CORPUS[0], CORPUS[2]]
    verdict = verify_document(document)
    submission = Submission.objects.create(
        match=match,
        version=1,
        document=document,
        content_hash=content_hash(document),
        state=Submission.State.VERIFIED,
        verdict=verdict,
    )
    # the record's version comes into force (the match had no result): its replay is shown
    results.apply_verified_result(match, verdict, submission=submission)
    Stage.objects.filter(pk=groups.pk).update(status=Stage.Status.CLOSED)
    organizer = User.objects.create_user("xss-desk", password="xss-pass-4321")
    tournament.organizers.add(organizer)
    yield tournament, match
    cache.clear()


def _assert_clean(page, url):
    # focus and hover whatever can take them: an injected handler would fire now
    for _ in range(6):
        page.keyboard.press("Tab")
    page.mouse.move(200, 300)
    assert page.evaluate("window.__xss") == 0, f"{url}: an injected script ran"
    violations = page.evaluate("window.__csp")
    assert violations == [], f"{url}: the page needs what the CSP blocks: {violations}"


def test_no_injected_script_runs_anywhere(xss_tournament, page_factory):
    tournament, match = xss_tournament
    page = page_factory()
    page.add_init_script(SENTINEL)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    groups = tournament.stages.get(order=1)
    knockout = tournament.stages.get(order=2)
    group = groups.groups.order_by("order", "name").first()
    line = match.home
    player = line.members.first().player
    public = [
        reverse("public:home"),
        reverse("public:tournament", args=[tournament.slug]),
        reverse("public:stage", args=[tournament.slug, groups.pk]),
        reverse("public:stage", args=[tournament.slug, knockout.pk]),
        reverse("public:group", args=[tournament.slug, group.pk]),
        reverse("public:round", args=[tournament.slug, match.round_id]),
        reverse("public:match", args=[tournament.slug, match.pk]),
        reverse("public:player", args=[player.pk]),
        reverse("public:line", args=[line.pk]),
        reverse("ratings:player", args=[player.pk]),
    ]
    for url in public:
        response = page.goto(url)
        assert response.status == 200, url
        _assert_clean(page, url)

    # the replay shows the seat names as text, step after step
    page.goto(reverse("public:match", args=[tournament.slug, match.pk]))
    replay = page.locator("#replay")
    replay.wait_for()
    for _ in range(8):
        page.keyboard.press("ArrowRight")
    assert "onfocus=" in replay.inner_text()
    assert page.locator("#replay [onfocus], #replay img, #replay iframe").count() == 0
    _assert_clean(page, "replay")
    # the bracket is the server's SVG, with the names as text
    page.goto(reverse("public:stage", args=[tournament.slug, knockout.pk]))
    assert page.locator("svg.bracket").is_visible()
    assert page.locator("svg.bracket script, svg.bracket [onload]").count() == 0

    page.goto(reverse("desk:login"))
    page.fill("#id_username", "xss-desk")
    page.fill("#id_password", "xss-pass-4321")
    with page.expect_navigation():
        page.locator("form.login-form button[type=submit]").click()
    desk = [
        reverse("desk:home"),
        reverse("desk:tournament", args=[tournament.slug]),
        reverse("desk:match", args=[tournament.slug, match.pk]),
        reverse("desk:print", args=[tournament.slug, match.round_id]),
    ]
    for url in desk:
        response = page.goto(url)
        assert response.status == 200, url
        _assert_clean(page, url)
    assert dialogs == []


def test_the_admin_and_the_api_docs_work_under_the_policy(xss_tournament, page_factory):
    tournament, _match = xss_tournament
    User.objects.create_superuser("xss-admin", password="xss-admin-4321")
    page = page_factory()
    page.add_init_script(SENTINEL)
    page.goto(reverse("admin:login"))
    page.fill("#id_username", "xss-admin")
    page.fill("#id_password", "xss-admin-4321")
    with page.expect_navigation():
        page.locator("input[type=submit]").click()
    for url in (
        reverse("admin:tournaments_tournament_changelist"),
        reverse("admin:tournaments_tournament_change", args=[tournament.pk]),
        reverse("admin:tournaments_line_changelist"),
    ):
        assert page.goto(url).status == 200, url
        _assert_clean(page, url)
    page.goto(reverse("api-docs"))
    page.locator(".swagger-ui .info").wait_for(timeout=15_000)
    assert page.evaluate("window.__xss") == 0
    assert page.evaluate("window.__csp") == []
