"""The phone's port of the deal-sheet referee gives the engine's verdicts (docs/at-the-table.md,
"What the phone checks offline").

Sheets are generated here from a seeded generator steered by the engine itself, over every
variant, every combination of the options that apply to it and every seat count: deals that can
happen and deals that cannot (a category to both sides, more than it gives, an impossible
value, scope no deal holds, a point that brings another, a category of another variant,
interrupted deals), and whole sheets short of the match end, exactly at it and played past it,
with tie-break deals, time limits, timeouts and abandons. The engine judges each; the port
(`public/static/js/sheet-referee.js`), fed the data the engine exports (`referee_table`,
`rule_table`), judges the same cases under Node in one process; every verdict must be equal,
sentences included.
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from scopa.match_end import (
    EndRule,
    MatchDecision,
    SheetDeal,
    SheetRefused,
    judge_sheet,
    rule_table,
)
from scopa.sheet import DealSheet, check_deal, referee_table, scope_bound, sides_for
from scopa.variants import OPTIONS, VARIANTS

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "public" / "static" / "js" / "sheet-referee.js"
RUNNER = Path(__file__).with_name("run_sheet_referee.js")
NODE = shutil.which("node")
SEATS = (2, 3, 4, 6)
DEALS_PER_TABLE = 40
SHEETS = 2500
ONGOING = {
    None,
    "not_finished",
    "too_few_deals",
    "knockout_level",
    "tiebreak_level",
    "level_at_target",
    "level_when_time_ran_out",
    "last_capture_missing",
}
"""What the match-end rule says of a sheet still being typed (and no refusal)."""

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: the port is not run")


def option_sets(variant_key: str) -> list[dict[str, object]]:
    """Every combination of the options that apply to the variant and change its rules (the
    display-only ones cannot change a verdict)."""
    variant = VARIANTS[variant_key]
    keys = [key for key in variant.options if not OPTIONS[key].display_only]
    choices = []
    for key in keys:
        spec = OPTIONS[key]
        choices.append([True, False] if spec.kind == "bool" else [c for c, _ in spec.choices])
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*choices)]


def tables() -> list[tuple[str, dict[str, object], int]]:
    return [
        (variant, options, seats)
        for variant in VARIANTS
        for options in option_sets(variant)
        for seats in SEATS
    ]


# --------------------------------------------------------------------------- deals


def random_deal(rng: random.Random, variant_key: str, options: dict[str, object], seats: int):
    variant = VARIANTS[variant_key]
    values = {**variant.default_options, **options}
    sides = sides_for(seats)
    bound = scope_bound(variant_key, seats)
    penalty = rng.random() < 0.2
    offender = rng.choice([None, *range(sides), *range(sides)]) if penalty else None
    rows: list[dict[str, int]] = [{} for _ in range(sides)]
    pick = rng.random()
    if pick < 0.6:
        counts = list(rng.choice(sorted(bound.counts)))
    elif pick < 0.8:
        counts = [rng.randint(0, bound.per_side + 2) for _ in range(sides)]
    else:
        counts = [rng.randint(0, 3) for _ in range(sides)]
    if penalty and rng.random() < 0.7:
        counts = [c + (0 if side == offender else 1) for side, c in enumerate(counts)]
    for side, count in enumerate(counts):
        if count or rng.random() < 0.1:
            rows[side]["scope"] = count
    for category in variant.categories(values):
        if category.key == "scope":
            continue
        most = category.max_points if category.max_points is not None else 2
        if category.values is not None:
            likely = sorted(category.values - {0})
        else:
            likely = list(range(category.step, most + 1, category.step))
        owner = rng.randrange(sides + 1)  # sides: nobody
        for side in range(sides):
            chance = 0.9 if side == owner else 0.12
            if rng.random() >= chance:
                continue
            pick = rng.random()
            if pick < 0.75:
                points = rng.choice(likely)
            elif pick < 0.85:
                points = most + 1
            elif pick < 0.95:
                points = rng.randint(0, 12)
            else:
                points = 0
            rows[side][category.key] = points
    if rng.random() < 0.06:
        other = rng.choice(["sette", "napola", "rebello", "poche_carte", "penalty", "bonus_x"])
        rows[rng.randrange(sides)][other] = rng.randint(0, 2)
    return DealSheet(tuple(rows), penalty, offender)


def deal_cases(rng: random.Random):
    all_tables = tables()
    cases, expected = [], []
    for index, (variant, options, seats) in enumerate(all_tables):
        for _ in range(DEALS_PER_TABLE):
            deal = random_deal(rng, variant, options, seats)
            names = rng.choice([None, ["Rossi", "élite Bianchi"], ["Uno"]])
            errors = check_deal(variant, options, seats, deal)
            expected.append(
                [
                    {
                        "code": e.code,
                        "side": e.side,
                        "category": e.category,
                        "it": e.message("it"),
                        "en": e.message("en"),
                        "named": e.message("it", names),
                    }
                    for e in errors
                ]
            )
            cases.append(
                {
                    "kind": "deal",
                    "table": index,
                    "names": names,
                    "deal": {
                        "breakdown": [dict(row) for row in deal.breakdown],
                        "penalty": deal.penalty,
                        "offender": deal.offender,
                    },
                }
            )
    data = [referee_table(variant, options, seats) for variant, options, seats in all_tables]
    return data, cases, expected


# --------------------------------------------------------------------------- sheets


def judged(rule: EndRule, deals: list[SheetDeal], **how: object) -> dict[str, object]:
    try:
        decision: MatchDecision = judge_sheet(rule, deals, **how)  # type: ignore[arg-type]
    except SheetRefused as refusal:
        problem = refusal.problem
        return {"ok": False, "code": problem.code, "deal": problem.deal, "params": problem.params}
    return {
        "ok": True,
        "totals": list(decision.totals),
        "winner": decision.winner,
        "margin": decision.margin,
        "reason": decision.reason.value,
        "end_deal": decision.end_deal,
    }


def random_sheet(rng: random.Random):
    """A sheet typed deal by deal the way a table plays it, the engine saying after each deal
    whether the next is a tie-break one; stopped at the end, before it or after it."""
    sides = rng.choice([2, 2, 2, 3])
    by_target = rng.random() < 0.5
    target = rng.choice([3, 5, 7, 11, 21]) if by_target else None
    rule = EndRule(
        target=target,
        deals=None if by_target else rng.randint(1, 6),
        knockout=rng.random() < 0.4,
        sides=sides,
    )
    time_expired = rng.random() < 0.25
    outcome = "completed" if rng.random() < 0.8 else rng.choice(["timeout", "abandon"])
    offender = rng.choice([None, *range(sides), *range(sides)])
    high = max(2, (target or 8) // 2)
    deals: list[SheetDeal] = []
    tiebreak = False
    for _ in range(rng.randint(0, 14)):
        if rng.random() < (0.6 if tiebreak else 0.3):
            points = (rng.randint(0, high),) * sides
        else:
            points = tuple(rng.randint(0, high) for _ in range(sides))
        flip = rng.random() < 0.04  # a tie-break mark where none is due, or none where one is
        deals.append(SheetDeal(points, tiebreak != flip))
        verdict = judged(rule, deals, time_expired=time_expired)
        code = verdict.get("code")
        if code == "last_capture_missing" and rng.random() < 0.6:
            last = deals[-1]
            deals[-1] = SheetDeal(last.points, last.tiebreak, False, rng.choice([0, 1]))
            verdict = judged(rule, deals, time_expired=time_expired)
            code = verdict.get("code")
        tiebreak = code in ("knockout_level", "tiebreak_level") or (tiebreak and not flip)
        if verdict["ok"] and rng.random() < 0.75:
            break  # over: mostly stopped there, sometimes played on past the end
        if code not in ONGOING and rng.random() < 0.8:
            break  # already refused: mostly left so

    if outcome != "completed" and rng.random() < 0.85:
        points = tuple(
            rng.randint(0, 1)
            if side == offender
            else rng.randint(0 if rng.random() < 0.1 else 1, 4)
            for side in range(sides)
        )
        deals.append(SheetDeal(points, tiebreak and rng.random() < 0.5, True))
    if deals and rng.random() < 0.05:
        deals.insert(rng.randrange(len(deals)), SheetDeal((1,) * sides, False, True))
    return rule, deals, outcome, offender, time_expired


def sheet_cases(rng: random.Random):
    cases, expected = [], []
    for _ in range(SHEETS):
        rule, deals, outcome, offender, time_expired = random_sheet(rng)
        expected.append(
            judged(rule, deals, outcome=outcome, offender=offender, time_expired=time_expired)
        )
        cases.append(
            {
                "kind": "sheet",
                "rule": rule_table(rule),
                "deals": [
                    {
                        "points": list(d.points),
                        "tiebreak": d.tiebreak,
                        "penalty": d.penalty,
                        "last_capture": d.last_capture,
                    }
                    for d in deals
                ],
                "outcome": outcome,
                "offender": offender,
                "time_expired": time_expired,
            }
        )
    return cases, expected


# --------------------------------------------------------------------------- the run


def run_port(payload: dict[str, object], tmp_path: Path) -> list[object]:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(payload), encoding="utf-8")
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(RUNNER), str(MODULE), str(cases)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    assert isinstance(verdicts, list)
    return verdicts


def assert_same(cases: list[dict], expected: list[object], got: list[object]) -> None:
    assert len(got) == len(expected)
    differ = [
        (index, cases[index], want, have)
        for index, (want, have) in enumerate(zip(expected, got, strict=True))
        if json.loads(json.dumps(want)) != have
    ]
    shown = "\n".join(
        f"case {index}: {json.dumps(case)[:600]}\n  engine: {want}\n  port:   {have}"
        for index, case, want, have in differ[:5]
    )
    assert not differ, f"{len(differ)} of {len(cases)} verdicts differ:\n{shown}"


def test_the_port_judges_every_generated_deal_as_the_engine(tmp_path):
    data, cases, expected = deal_cases(random.Random(36))
    got = run_port({"tables": data, "cases": cases}, tmp_path)
    assert_same(cases, expected, got)
    # the generator reaches every kind of refusal, and deals that can happen, on every variant
    codes = Counter(error["code"] for errors in expected for error in errors)
    assert set(codes) == {
        "unknown_category",
        "both_sides",
        "too_many",
        "too_many_total",
        "impossible_value",
        "scope_side",
        "scope_combination",
        "implied",
    }, codes
    for variant in VARIANTS:
        fine = [
            errors
            for case, errors in zip(cases, expected, strict=True)
            if not errors and data[case["table"]]["variant"] == variant
        ]
        assert len(fine) > 50, variant


def test_the_port_judges_every_generated_sheet_as_the_engine(tmp_path):
    cases, expected = sheet_cases(random.Random(3600))
    got = run_port({"cases": cases}, tmp_path)
    assert_same(cases, expected, got)
    outcomes = Counter(
        verdict["reason"] if verdict["ok"] else verdict["code"]
        for verdict in expected
        if isinstance(verdict, dict)
    )
    # finished matches for every reason a sheet can end with, and the usual refusals
    for seen in (
        "target",
        "deals",
        "draw",
        "time_limit",
        "tiebreak",
        "tiebreak_last_capture",
        "timeout",
        "abandon",
        "over_before",
        "not_finished",
        "too_few_deals",
        "knockout_level",
        "tiebreak_level",
        "last_capture_missing",
        "tiebreak_expected",
        "tiebreak_not_level",
        "level_at_target",
        "level_when_time_ran_out",
        "penalty_without_offence",
        "penalty_not_last",
        "penalty_missing",
        "penalty_without_scopa",
        "offender_missing",
        "no_deals",
    ):
        assert outcomes[seen] > 3, (seen, outcomes)
