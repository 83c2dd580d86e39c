"""One clock rule at the limit: past means strictly after (−1, 0 and +1 ms around each limit)."""

import pytest

from scopa import verify_document

from .helpers import sim

MOVE_S, BANK_S = 20, 60
CLOCK = {"move_s": MOVE_S, "bank_s": BANK_S}


def declared_at(delta_ms: int) -> dict:
    """A declared timeout whose ``t_ms`` is ``delta_ms`` from the offender's exact limit."""
    doc = sim(seed=1, clock=CLOCK, outcome={"kind": "timeout", "seat": 0, "deal": 1, "play": 5})
    verdict = verify_document(doc)
    side = doc["outcome"]["seat"] % 2
    last = doc["deals"][-1]
    ref = last["plays"][-1]["t_ms"] if last["plays"] else last["start_ms"]
    limit = ref + MOVE_S * 1000 + int(verdict["clock"]["bank_left_ms"][side])
    doc["outcome"]["t_ms"] = limit + delta_ms
    return verify_document(doc)


@pytest.mark.parametrize(
    ("delta_ms", "expected"),
    [(-1, "not_confirmed"), (0, "not_confirmed"), (1, "confirmed")],
)
def test_a_declared_timeout_is_confirmed_only_past_the_limit(delta_ms, expected):
    assert declared_at(delta_ms)["clock"]["declared_timeout"] == expected


def slowed(extra_ms: int) -> dict:
    """The first play takes ``move_s`` + the whole bank + ``extra_ms``; later times move too."""
    doc = sim(seed=1, clock=CLOCK)
    first = doc["deals"][0]
    took = first["plays"][0]["t_ms"] - first["start_ms"]
    shift = MOVE_S * 1000 + BANK_S * 1000 + extra_ms - took
    for d, deal in enumerate(doc["deals"]):
        if d > 0:
            deal["start_ms"] += shift
        for play in deal["plays"]:
            play["t_ms"] += shift
    return verify_document(doc)


@pytest.mark.parametrize(("extra_ms", "late"), [(-1, False), (0, False), (1, True)])
def test_a_play_is_late_only_past_the_bank(extra_ms, late):
    verdict = slowed(extra_ms)
    codes = [e["code"] for e in verdict["errors"]]
    assert ("undeclared_timeout" in codes) is late
    assert bool(verdict["clock"]["timeouts"]) is late
