"""The VP tables loaded by the migration follow seed 000 / 003 at every row boundary."""

import json

import pytest

from tournaments.algorithms import vp as vp_algo
from tournaments.models import VPTable
from tournaments.services.vp import DATA_PATH, load_default_tables, vp_table_from_model

# seed 000, "Tabella dei Victory Points": (winner VP, from MP, to MP) per table
SEED_000 = {
    "points-7": [(10, 0, 0), (11, 1, 1), (12, 2, 2), (13, 3, 3), (14, 4, 4), (15, 5, 5),
                 (16, 6, 6), (17, 7, 7), (18, 8, None)],
    "points-11": [(10, 0, 0), (11, 1, 1), (12, 2, 2), (13, 3, 3), (14, 4, 4), (15, 5, 5),
                  (16, 6, 7), (17, 8, 9), (18, 10, 11), (19, 12, 13), (20, 14, None)],
    "points-21": [(10, 0, 0), (11, 1, 1), (12, 2, 3), (13, 4, 5), (14, 6, 7), (15, 8, 9),
                  (16, 10, 11), (17, 12, 13), (18, 14, 16), (19, 17, 19), (20, 20, None)],
}  # fmt: skip


@pytest.fixture(autouse=True)
def tables(db):
    """The migration loads them; reload if another app's transactional test flushed them."""
    load_default_tables()


def table(slug):
    return vp_table_from_model(VPTable.objects.get(slug=slug))


@pytest.mark.django_db
def test_migration_loads_every_table_of_the_data_file():
    with open(DATA_PATH, encoding="utf-8") as handle:
        slugs = {entry["slug"] for entry in json.load(handle)}
    assert slugs <= set(VPTable.objects.values_list("slug", flat=True))
    assert {"points-7", "points-11", "points-21", "win-draw-loss"} <= slugs


@pytest.mark.django_db
@pytest.mark.parametrize("slug", sorted(SEED_000))
def test_every_row_boundary_matches_seed_000(slug):
    scale = table(slug)
    for vp_winner, mp_from, mp_to in SEED_000[slug]:
        for margin in {mp_from, mp_to if mp_to is not None else mp_from + 25}:
            score = vp_algo.match_score(scale, margin)
            assert (score.vp_winner, score.vp_loser) == (vp_winner, 20 - vp_winner), margin
            assert (score.mp_winner, score.mp_loser) == (margin, -margin)
        if mp_from > 0:  # one below the row starts in the previous row
            below = vp_algo.match_score(scale, mp_from - 1)
            assert below.vp_winner == vp_winner - 1


@pytest.mark.django_db
def test_win_draw_loss_table_of_seed_003():
    scale = table("win-draw-loss")
    assert vp_algo.match_score(scale, 9).vp_winner == 20
    assert vp_algo.match_score(scale, 9).vp_loser == 0
    draw = vp_algo.match_score(scale, 0, draw=True)
    assert (draw.vp_winner, draw.vp_loser) == (10, 10)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "slug,margin,expected",
    [
        ("points-11", 0, (14, 0, 4, -14)),  # vp-tables.md example: 14 VP → +4 MP, -14 MP
        ("points-11", 9, (17, 0, 8, -14)),
        ("points-7", 2, (14, 0, 4, -8)),  # 7-point table stops at 18-2: offender -8
        ("points-21", 3, (14, 0, 6, -20)),
        ("points-21", 25, (20, 0, 20, -20)),
    ],
)
def test_timeout_examples(slug, margin, expected):
    score = vp_algo.match_score(table(slug), margin, vp_algo.Outcome.TIMEOUT)
    assert (score.vp_winner, score.vp_loser, score.mp_winner, score.mp_loser) == expected


@pytest.mark.django_db
def test_an_organizer_table_with_a_gap_is_refused_when_scoring():
    from tournaments.exceptions import TournamentError

    custom = VPTable.objects.create(slug="club", name="Club")
    custom.rows.create(vp_winner=10, vp_loser=10, mp_from=0, mp_to=0)
    custom.rows.create(vp_winner=15, vp_loser=5, mp_from=2, mp_to=None)
    with pytest.raises(TournamentError):
        vp_table_from_model(custom)


@pytest.mark.django_db
def test_presets_restore_missing_shipped_tables():
    import datetime

    from tournaments.services.presets import create_tournament_from_preset

    VPTable.objects.filter(slug="points-21").delete()
    tournament = create_tournament_from_preset(
        "scopa-classica-21", name="Ripristino", start_date=datetime.date(2026, 1, 1)
    )
    assert tournament.vp_table.slug == "points-21"
    assert tournament.vp_table.rows.count() == 11


@pytest.mark.django_db
def test_a_table_is_read_in_one_plain_query_or_from_its_prefetched_rows(
    django_assert_num_queries,
):
    """Rows stored out of order come out by ``mp_from``; the read neither joins the table for
    the rows' default ordering nor repeats a prefetch."""
    custom = VPTable.objects.create(slug="club-order", name="Club", timeout_min_vp=15)
    custom.rows.create(vp_winner=15, vp_loser=5, mp_from=1, mp_to=None)
    custom.rows.create(vp_winner=10, vp_loser=10, mp_from=0, mp_to=0)
    expected = ((10, 10, 0, 0), (15, 5, 1, None))
    with django_assert_num_queries(1) as queries:
        read = vp_table_from_model(custom)
    assert [(r.vp_winner, r.vp_loser, r.mp_from, r.mp_to) for r in read.rows] == list(expected)
    assert "JOIN" not in queries[0]["sql"] and "ORDER BY" not in queries[0]["sql"]
    prefetched = VPTable.objects.prefetch_related("rows").get(pk=custom.pk)
    with django_assert_num_queries(0):
        assert vp_table_from_model(prefetched) == read


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("rows", "italian"),
    [
        (
            [(10, 10, 0, 0), (15, 5, 1, None)],  # the timeout minimum, 14, is no winner's VP
            "il minimo di 14 VP dopo il tempo scaduto non è un VP del vincitore nella tabella, "
            "quindi non se ne possono ricavare gli MP",
        ),
        (
            [(10, 10, 0, 0), (14, 6, 3, None)],
            "c'è un buco tra la riga 1 (fino a 0 MP) e la riga 2 (da 3 MP)",
        ),
    ],
    ids=["timeout-minimum", "gap"],
)
def test_an_inconsistent_table_is_described_in_the_organizer_s_language(rows, italian):
    """What is wrong with a table came in English inside the Italian sentence."""
    from django.utils import translation

    from tournaments.exceptions import TournamentError

    custom = VPTable.objects.create(slug="club-it", name="Club")
    for winner, loser, mp_from, mp_to in rows:
        custom.rows.create(vp_winner=winner, vp_loser=loser, mp_from=mp_from, mp_to=mp_to)
    with translation.override("it"), pytest.raises(TournamentError) as raised:
        vp_table_from_model(custom)
    assert str(raised.value.message) == f"La tabella VP “Club” non è coerente: {italian}"
