"""The phone reads a sheet offline as the check URL answers it online (docs/at-the-table.md,
"What the phone checks offline").

The page carries ``results.offline_referee(match)``; ``ScopaReferee.progress`` (in
``public/static/js/sheet-referee.js``) reads the typed deals with it. Here sheets are typed at
random the way the phone types them (strings in the cells, blanks, zeros, a slip of the thumb,
tie-break marks, the last capture) for tournaments of every variant, end rule, knock-out or not,
with and without a time limit, in Italian and English; the answer of the server's reading
(``reports.deals_payload`` then ``results.sheet_progress``, as ``check_sheet`` does) and the
phone's must be equal, sentences included. The engine-level cases are in
tests/engine/test_sheet_referee_js.py.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from django.utils import translation

from scopa.variants import get_variant
from scoresheets.services import reports
from tests.engine.test_sheet_referee_js import NODE, run_port
from tournaments.models import EndRule, Stage
from tournaments.services import results

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: the port is not run")

SETTINGS = [
    # variant, options, players per line, end rule, end value, knock-out, time limit
    ("scopa", {}, 1, EndRule.TARGET, 11, False, 0),
    ("scopa", {"napola": True, "rebello": True}, 2, EndRule.TARGET, 5, True, 0),
    ("scopa-d-assi", {}, 1, EndRule.DEALS, 3, False, 1800),
    ("scopa-d-assi", {"napola": True}, 3, EndRule.DEALS, 2, True, 0),
    ("scopa-15", {}, 1, EndRule.TARGET, 11, False, 1800),
    ("scopa-15", {"forced_capture": False}, 2, EndRule.TARGET, 6, True, 1800),
]
SHEETS_PER_SETTING = 70


def _set_up(match, setting):
    """The match's tournament and stage as the setting says (in memory: both readings take them
    from the match's own objects)."""
    variant, options, seats, end_rule, end_value, knockout, time_limit = setting
    stage = match.round.stage
    tournament = stage.tournament
    tournament.variant = variant
    tournament.options = options
    tournament.seats_per_line = seats
    tournament.end_rule = end_rule
    tournament.end_value = end_value
    tournament.time_limit_s = time_limit
    stage.kind = Stage.Kind.KNOCKOUT if knockout else Stage.Kind.ROUND_ROBIN


def _deal(rng: random.Random, keys: list[str]) -> list[dict[str, object]]:
    """One deal typed as a table types it: each point to one line (or nobody), a few scope,
    empty cells left blank, now and then a cell the server keeps as a number."""
    breakdown: list[dict[str, object]] = [{}, {}]
    for key in keys:
        if key == "scope":
            for side in (0, 1):
                breakdown[side][key] = rng.choice(["", "", "0", "1", "1", "2", 3])
            continue
        owner = rng.choice([0, 1, None]) if key != "poche_carte" else None
        for side in (0, 1):
            breakdown[side][key] = "1" if side == owner else rng.choice(["", "", "0"])
    if rng.random() < 0.15:
        # a slip of the thumb: a point to both lines, an impossible figure, not a number
        key = rng.choice(keys)
        breakdown[rng.randrange(2)][key] = rng.choice(["1", "2", "4", "1.5", "abc", "-1", "150"])
    return breakdown


def _typed(rng: random.Random, keys: list[str]) -> list[dict[str, object]]:
    deals: list[dict[str, object]] = [
        {
            "breakdown": _deal(rng, keys),
            "tiebreak": rng.random() < 0.1,
            "last_capture": rng.choice([None, None, None, 0, 1, "1"]),
        }
        for _ in range(rng.randint(0, 9))
    ]
    if deals and rng.random() < 0.3:
        deals.append({"breakdown": [{}, {}], "tiebreak": False, "last_capture": None})
    return deals


def _server(match, typed, time_expired):
    return reports.sheet_reading(match, typed, time_expired=time_expired)


@pytest.mark.parametrize("lang", ["it", "en"])
def test_the_phone_reads_a_typed_sheet_as_the_check_url(first_match, tmp_path, lang):
    rng = random.Random(f"offline-{lang}")
    referees, cases, expected = [], [], []
    with translation.override(lang):
        for setting in SETTINGS:
            _set_up(first_match, setting)
            referees.append(results.offline_referee(first_match))
            keys = [c.key for c in _categories(first_match)]
            for _ in range(SHEETS_PER_SETTING):
                typed = _typed(rng, keys)
                time_expired = rng.random() < 0.3
                expected.append(_server(first_match, typed, time_expired))
                cases.append(
                    {
                        "kind": "page",
                        "referee": len(referees) - 1,
                        "typed": typed,
                        "time_expired": time_expired,
                    }
                )
    got = run_port({"referees": referees, "cases": cases}, tmp_path)
    differ = [
        (case, want, have)
        for case, want, have in zip(cases, expected, got, strict=True)
        if want != have
    ]
    assert not differ, f"{len(differ)} of {len(cases)} differ, first: {differ[:3]}"
    seen = Counter(
        "over" if v["ok"] and v["over"] else "typing" if v["ok"] else "refused" for v in expected
    )
    assert min(seen.values()) > 10 and len(seen) == 3, seen


def _categories(match):
    tournament = match.round.stage.tournament
    return get_variant(tournament.variant).categories(tournament.options)
