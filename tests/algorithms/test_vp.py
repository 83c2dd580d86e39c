"""VP tables (seed 000, seed 003), their validation, and the timeout/abandon rule."""

import itertools
import json

import pytest

from tournaments.algorithms.vp import (
    DEFAULT_TABLES_PATH,
    FORFEIT_MARGIN,
    MatchScore,
    Outcome,
    TableKind,
    VPRow,
    VPTable,
    VPTableError,
    load_tables,
    match_score,
    table_from_dict,
)

# Seed 000, "Tabella dei Victory Points", column by column: VP split → (da MP, a MP); None = "+"
SEED_000 = {
    "points-7": [
        ((10, 10), (0, 0)),
        ((11, 9), (1, 1)),
        ((12, 8), (2, 2)),
        ((13, 7), (3, 3)),
        ((14, 6), (4, 4)),
        ((15, 5), (5, 5)),
        ((16, 4), (6, 6)),
        ((17, 3), (7, 7)),
        ((18, 2), (8, None)),
    ],
    "points-11": [
        ((10, 10), (0, 0)),
        ((11, 9), (1, 1)),
        ((12, 8), (2, 2)),
        ((13, 7), (3, 3)),
        ((14, 6), (4, 4)),
        ((15, 5), (5, 5)),
        ((16, 4), (6, 7)),
        ((17, 3), (8, 9)),
        ((18, 2), (10, 11)),
        ((19, 1), (12, 13)),
        ((20, 0), (14, None)),
    ],
    "points-21": [
        ((10, 10), (0, 0)),
        ((11, 9), (1, 1)),
        ((12, 8), (2, 3)),
        ((13, 7), (4, 5)),
        ((14, 6), (6, 7)),
        ((15, 5), (8, 9)),
        ((16, 4), (10, 11)),
        ((17, 3), (12, 13)),
        ((18, 2), (14, 16)),
        ((19, 1), (17, 19)),
        ((20, 0), (20, None)),
    ],
}

TABLES = load_tables()

BOUNDARIES = [
    (slug, margin, vp)
    for slug, rows in SEED_000.items()
    for vp, (mp_from, mp_to) in rows
    for margin in sorted({mp_from, mp_from if mp_to is None else mp_to})
]


def test_data_file_holds_the_seed_tables():
    # and the Valliadi's 3/1/0 (issue 34), which no seed gives
    assert set(TABLES) == {"points-7", "points-11", "points-21", "win-draw-loss", "valliadi-3-0"}
    for slug, rows in SEED_000.items():
        assert TABLES[slug].rows == tuple(VPRow(w, loser, f, t) for (w, loser), (f, t) in rows)
        assert TABLES[slug].kind is TableKind.MARGIN
        assert TABLES[slug].timeout_min_vp == 14


def test_data_file_metadata():
    entries = {entry["slug"]: entry for entry in json.loads(DEFAULT_TABLES_PATH.read_text())}
    assert {
        slug: (e["target_points"], e["deals_min"], e["deals_max"]) for slug, e in entries.items()
    } == {
        "points-7": (7, 1, 2),
        "points-11": (11, 3, 3),
        "points-21": (21, 4, 5),
        "win-draw-loss": (None, None, None),
        "valliadi-3-0": (None, None, None),
    }
    for entry in entries.values():
        assert entry["name_it"] and entry["name_en"]


@pytest.mark.parametrize(("slug", "margin", "vp"), BOUNDARIES)
def test_every_row_boundary(slug, margin, vp):
    score = match_score(TABLES[slug], margin)
    assert (score.vp_winner, score.vp_loser) == vp
    assert (score.mp_winner, score.mp_loser) == (margin, -margin)


@pytest.mark.parametrize("slug", sorted(SEED_000))
def test_one_past_each_row_is_the_next_row(slug):
    rows = SEED_000[slug]
    for (_, (_, mp_to)), (next_vp, _) in itertools.pairwise(rows):
        score = match_score(TABLES[slug], mp_to + 1)
        assert (score.vp_winner, score.vp_loser) == next_vp


@pytest.mark.parametrize(("slug", "top"), [("points-7", 18), ("points-11", 20), ("points-21", 20)])
def test_or_more_rows_are_open_ended(slug, top):
    for margin in (40, 100, 1000):
        assert match_score(TABLES[slug], margin).vp_winner == top


def test_draw_on_a_margin_table():
    assert match_score(TABLES["points-11"], 0, draw=True) == MatchScore(10, 10, 0, 0)


def test_knock_out_winner_at_margin_zero_gets_the_zero_row():
    """Third tie-break deal level: the last capture loses, margin 0; the table says 10-10."""
    assert match_score(TABLES["points-11"], 0) == MatchScore(10, 10, 0, 0)
    assert match_score(TABLES["win-draw-loss"], 0) == MatchScore(20, 0, 0, 0)


# --- win/draw/loss, seed 003 -----------------------------------------------------------------


def test_win_draw_loss_table():
    table = TABLES["win-draw-loss"]
    assert table.kind is TableKind.WIN_DRAW_LOSS
    assert match_score(table, 5) == MatchScore(20, 0, 5, -5)
    assert match_score(table, 1) == MatchScore(20, 0, 1, -1)
    assert match_score(table, 0, draw=True) == MatchScore(10, 10, 0, 0)


def test_win_draw_loss_timeout_keeps_the_point_difference_as_mp():
    table = TABLES["win-draw-loss"]
    assert match_score(table, 7, Outcome.TIMEOUT) == MatchScore(20, 0, 7, -7)
    assert match_score(table, 0, Outcome.ABANDON) == MatchScore(20, 0, 0, 0)


# --- timeout and abandon (vp-tables.md) --------------------------------------------------------


@pytest.mark.parametrize("outcome", [Outcome.TIMEOUT, Outcome.ABANDON])
def test_worked_example_eleven_points(outcome):
    """vp-tables.md: 11-point table, winner at 14 VP → +4 MP, offender 0 VP → -14 MP."""
    assert match_score(TABLES["points-11"], 2, outcome) == MatchScore(14, 0, 4, -14)


@pytest.mark.parametrize(
    ("slug", "margin", "expected"),
    [
        # at least 14 VP: small margins are lifted to the 14 VP row, MP its smallest figure
        ("points-11", 0, MatchScore(14, 0, 4, -14)),
        ("points-11", 4, MatchScore(14, 0, 4, -14)),
        ("points-11", 5, MatchScore(15, 0, 5, -14)),
        ("points-11", 7, MatchScore(16, 0, 6, -14)),  # row 16-4 is 6–7 MP: smallest is 6
        ("points-11", 13, MatchScore(19, 0, 12, -14)),
        ("points-11", 30, MatchScore(20, 0, 14, -14)),
        # 7-point table stops at 18-2: the offender gets minus that row's smallest MP
        ("points-7", 0, MatchScore(14, 0, 4, -8)),
        ("points-7", 6, MatchScore(16, 0, 6, -8)),
        ("points-7", 12, MatchScore(18, 0, 8, -8)),
        # 21-point table: 14 VP is the 6–7 MP row
        ("points-21", 0, MatchScore(14, 0, 6, -20)),
        ("points-21", 7, MatchScore(14, 0, 6, -20)),
        ("points-21", 9, MatchScore(15, 0, 8, -20)),
        ("points-21", 16, MatchScore(18, 0, 14, -20)),
        ("points-21", 25, MatchScore(20, 0, 20, -20)),
    ],
)
def test_timeout_reads_mp_back_from_the_table(slug, margin, expected):
    assert match_score(TABLES[slug], margin, Outcome.TIMEOUT) == expected
    assert match_score(TABLES[slug], margin, Outcome.ABANDON) == expected


def test_forfeit_is_an_abandon_before_any_deal():
    for slug, table in TABLES.items():
        expected = match_score(table, FORFEIT_MARGIN, Outcome.ABANDON)
        assert match_score(table, 0, Outcome.FORFEIT) == expected, slug
        assert match_score(table, 9, Outcome.FORFEIT) == expected, slug  # margin is ignored
    assert match_score(TABLES["points-11"], 0, Outcome.FORFEIT) == MatchScore(14, 0, 4, -14)


def test_bye_scores_nothing():
    for table in TABLES.values():
        assert match_score(table, 0, Outcome.BYE) == MatchScore(0, 0, 0, 0)


def test_outcome_values_are_the_database_values():
    assert [o.value for o in Outcome] == ["completed", "timeout", "abandon", "forfeit", "bye"]
    assert match_score(TABLES["points-11"], 2, "timeout") == MatchScore(14, 0, 4, -14)


@pytest.mark.parametrize(
    ("margin", "outcome", "draw"),
    [(-1, Outcome.COMPLETED, False), (1, Outcome.COMPLETED, True), (0, Outcome.TIMEOUT, True)],
)
def test_impossible_results(margin, outcome, draw):
    with pytest.raises(ValueError):
        match_score(TABLES["points-11"], margin, outcome, draw=draw)


# --- validation ------------------------------------------------------------------------------


def _rows(*rows):
    return tuple(VPRow(*row) for row in rows)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ((), "at least one row"),
        (_rows((10, 10, 1, 1), (14, 6, 2, None)), "start at 0"),
        (_rows((10, 10, 0, 0), (14, 6, 2, None)), "gap between row 1"),
        (_rows((10, 10, 0, 1), (14, 6, 1, None)), "overlap between row 1"),
        (_rows((10, 10, 0, 0), (14, 5, 1, None)), r"splits 14\+5"),
        (_rows((10, 10, 0, 0), (14, 6, 1, 3)), "open-ended"),
        (_rows((10, 10, 0, None), (14, 6, 1, None)), "not the last row"),
        (_rows((10, 10, 0, 0), (14, 6, 3, 1), (15, 5, 2, None)), "down to"),
        (_rows((10, 10, 0, 0), (14, 6, 1, 1), (13, 7, 2, None)), "not more than"),
        (_rows((10, 10, 0, 0), (8, 12, 1, None)), "gives the winner 8"),
        (_rows((10, 10, 0, 0), (12, 8, 1, None)), "timeout minimum 14"),
    ],
)
def test_invalid_margin_tables(rows, message):
    with pytest.raises(VPTableError, match=message):
        VPTable(rows)


def test_valid_custom_table():
    table = VPTable(_rows((5, 5, 0, 0), (7, 3, 1, 2), (10, 0, 3, None)), timeout_min_vp=7)
    assert match_score(table, 2) == MatchScore(7, 3, 2, -2)
    assert match_score(table, 0, Outcome.TIMEOUT) == MatchScore(7, 0, 1, -3)


@pytest.mark.parametrize(
    ("win", "draw", "loss", "message"),
    [(10, 20, 0, "win ≥ draw"), (20, 11, 0, "two draws"), (3, 2, 1, "timeout minimum")],
)
def test_invalid_win_draw_loss_tables(win, draw, loss, message):
    with pytest.raises(VPTableError, match=message):
        VPTable((), TableKind.WIN_DRAW_LOSS, win, draw, loss)


def test_win_draw_loss_table_has_no_rows():
    with pytest.raises(VPTableError, match="no MP rows"):
        VPTable(_rows((10, 10, 0, None)), TableKind.WIN_DRAW_LOSS)


def test_table_from_dict_names_the_table_in_errors():
    with pytest.raises(VPTableError, match=r"'mine'.*gap"):
        table_from_dict({"slug": "mine", "rows": [[10, 10, 0, 0], [14, 6, 3, None]]})
    with pytest.raises(VPTableError, match="'bad' is malformed"):
        table_from_dict({"slug": "bad", "rows": [[10, 10]]})
    with pytest.raises(VPTableError, match="'odd' is malformed"):
        table_from_dict({"slug": "odd", "kind": "elo", "rows": []})


def test_load_tables_rejects_duplicate_slugs(tmp_path):
    entry = {"slug": "x", "kind": "win_draw_loss", "rows": []}
    path = tmp_path / "tables.json"
    path.write_text(json.dumps([entry, entry]))
    with pytest.raises(VPTableError, match="twice"):
        load_tables(path)
