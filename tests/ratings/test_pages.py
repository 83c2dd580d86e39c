"""Rating pages, template tags, the SVG chart and seeding from ratings."""

from datetime import date, timedelta

import pytest
from django.template import Context, Template
from django.utils import timezone

from ratings.rendering import rating_chart_svg
from ratings.services.queries import leaderboard, seeded_line_ids
from ratings.services.ratings import recompute


@pytest.fixture
def ladder(world):
    """Four players: 'Ace' beats everyone 8 times, 'Rusty' played long ago."""
    today = timezone.localdate()
    ace, b, c, rusty = (world.player(n) for n in ("Ace", "Bea", "Cal", "Rusty"))
    lines = {p.name: world.line(p) for p in (ace, b, c, rusty)}
    old = world.tournament("old", today - timedelta(days=800))
    for r in range(1, 7):
        world.play(old, r, lines["Rusty"], lines["Cal"], 11, 4)
    t = world.tournament("recent", today - timedelta(days=10))
    for r in range(1, 9):
        world.play(t, r, lines["Ace"], lines["Bea"], 11, 5)
        world.play(t, r, lines["Cal"], lines["Ace"], 3, 11)
    recompute()
    return {"players": (ace, b, c, rusty), "lines": lines, "t": t}


def test_leaderboard_needs_games_and_recent_activity(ladder):
    names = [row.player.name for row in leaderboard("singles", min_games=5)]
    assert names[0] == "Ace" and "Rusty" not in names
    assert "Rusty" in [r.player.name for r in leaderboard("singles", min_games=5, active_days=None)]
    assert [r.player.name for r in leaderboard("singles", min_games=15)] == ["Ace"]
    top = leaderboard("singles", min_games=5)[0]
    assert top.display > 1500 and top.level


def test_pages_render(client, ladder):
    ace = ladder["players"][0]
    page = client.get("/ratings/?pool=singles")
    assert page.status_code == 200 and "Ace" in page.content.decode()
    assert client.get("/ratings/?pool=nonsense").status_code == 404
    detail = client.get(f"/ratings/players/{ace.pk}/")
    assert detail.status_code == 200 and "<svg" in detail.content.decode()
    assert client.get("/ratings/players/999999/").status_code == 404


def test_template_tags(ladder, world):
    ace = ladder["players"][0]
    upcoming = world.match(ladder["t"], 9, ladder["lines"]["Ace"], ladder["lines"]["Bea"])
    html = Template(
        "{% load ratings_tags %}{% win_probability m %}|{% rating_chart p %}|{% skill_level p %}"
    ).render(Context({"m": upcoming, "p": ace}))
    prob, chart, level = html.split("|")
    home_pct = int(prob.split("Ace ")[1].split("%")[0])
    assert home_pct > 70
    assert chart.startswith("<svg") and "Ace" in chart
    assert "skill-level" in level
    bye = world.match(ladder["t"], 10, ladder["lines"]["Cal"], None)
    assert (
        Template("{% load ratings_tags %}{% win_probability m %}").render(Context({"m": bye})) == ""
    )


def test_chart_without_history_and_escaping():
    empty = rating_chart_svg([], title="<x>", empty_text="none & nothing")
    assert "&lt;x&gt;" in empty and "none &amp; nothing" in empty
    one = rating_chart_svg([(date(2026, 1, 1), 1520, 7.5)], title="t")
    assert "<circle" in one


def test_seeding_puts_the_strongest_first(ladder, world):
    lines = ladder["lines"]
    t = world.tournament("cup")
    for name in ("Bea", "Cal", "Ace", "Rusty"):
        world.match(t, 1, lines[name], lines["Bea"] if name != "Bea" else lines["Cal"])
    seeds = seeded_line_ids(t)
    assert seeds[0] == lines["Ace"].id
    assert set(seeds) == {line.id for line in lines.values()}


def test_line_ratings_feed_the_tournament_seeding_service(ladder, world):
    from ratings.services.queries import tournament_line_ratings
    from tournaments.services.schedule import rating_seeds

    lines = ladder["lines"]
    t = world.tournament("cup2")
    newcomer = world.line(world.player("Newcomer"))
    for line in (lines["Bea"], newcomer, lines["Ace"]):
        world.match(t, 1, line, lines["Cal"])
    ratings = tournament_line_ratings(t)
    assert newcomer.id not in ratings and ratings[lines["Ace"].id] > ratings[lines["Bea"].id]
    ordered = rating_seeds([lines["Bea"], newcomer, lines["Ace"], lines["Cal"]], ratings)
    assert ordered[0] == lines["Ace"] and ordered[-1] == newcomer


def test_no_win_probability_once_the_match_is_played(ladder):
    played = ladder["t"].stages.get().rounds.get(number=1).matches.first()
    assert (
        Template("{% load ratings_tags %}{% win_probability m %}").render(Context({"m": played}))
        == ""
    )


@pytest.mark.django_db
def test_leaderboard_opens_on_a_pool_that_has_players(client):
    """A pairs event: the page must not open on an empty singles tab."""
    from ratings.models import Rating
    from ratings.services.queries import MIN_GAMES
    from tournaments.models import Player
    from tournaments.services import entries, presets, vp

    # players are shown through a public tournament they play in (the access policy)
    vp.load_default_tables()
    tournament = presets.create_tournament_from_preset(
        "valliadi-21-un-ora", name="Valliadi", start_date=timezone.localdate(), stages=[]
    )
    entries.add_lines(
        tournament,
        [entries.LineRow(name="Anna e Bruno", players=[("Anna", ""), ("Bruno", "")], row_number=1)],
    )
    for name in ("Anna", "Bruno"):
        Rating.objects.create(
            pool="pairs",
            player=Player.objects.get(name=name),
            mu=25.0,
            sigma=5.0,
            games=MIN_GAMES + 1,
            last_played=timezone.localdate(),
            display=1600,
        )
    page = client.get("/ratings/")
    assert page.status_code == 200
    assert page.context["pool"] == "pairs"
    assert "Anna" in page.content.decode()
