"""The compiled hot loop and the .py source give the same answer on every kind of record.

setup.py compiles the verifier's hot modules with mypyc; `scopa.native` runs the .py
source instead when the build failed or `SCOPA_ENGINE_PURE` is set. Both must be the same
verifier: one corpus (seed-derived records of the three variants and every seat count, every end
reason, timeouts and abandons with clock data, damaged records with illegal plays, records of
another origin from bench/foreign_corpus.py) goes through the package as imported and through a
copy imported from the .py files only, and every answer, in both languages, must be equal.
"""

import copy
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import scopa as engine
from scopa import EndReason, simulate_match

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ("scopa", "scopa-d-assi", "scopa-15")


def _foreign_records(count: int) -> list[dict]:
    spec = importlib.util.spec_from_file_location(
        "foreign_corpus", ROOT / "bench/foreign_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    records = (module.record(seed) for seed in range(count * 2))
    return [doc for doc in records if doc is not None][:count]


def _damaged(doc: dict, rng: random.Random) -> list[dict]:
    """Illegal and unreadable versions of a legal record: a card not in hand, a wrong take, a
    play by the wrong seat, plays missing or added, a deal missing or added, wrong declared
    points."""
    played = [d for d, deal in enumerate(doc["deals"]) if deal.get("plays")]
    if not played:
        return []
    out = []
    d = rng.choice(played)
    plays = doc["deals"][d]["plays"]
    p = rng.randrange(len(plays))
    for mutate in (
        lambda play: play.update(card=rng.choice(doc["deals"][d]["deck"])),
        lambda play: play.update(take=rng.sample(doc["deals"][d]["deck"], rng.randrange(1, 3))),
        lambda play: play.update(take=[]),
        lambda play: play.update(seat=(play.get("seat", 0) + 1) % len(doc["seats"])),
    ):
        bad = copy.deepcopy(doc)
        mutate(bad["deals"][d]["plays"][p])
        out.append(bad)
    for change in (
        lambda deal: deal["plays"].pop(),
        lambda deal: deal["plays"].append(dict(deal["plays"][-1])),
        lambda deal: deal.update(declared=[9] * len(deal.get("declared", [0, 0]))),
        lambda deal: deal.update(dealer=(deal["dealer"] + 1) % len(doc["seats"])),
    ):
        bad = copy.deepcopy(doc)
        change(bad["deals"][d])
        out.append(bad)
    shorter = copy.deepcopy(doc)
    shorter["deals"].pop()
    longer = copy.deepcopy(doc)
    longer["deals"].append(copy.deepcopy(doc["deals"][-1]))
    return [*out, shorter, longer]


@pytest.fixture(scope="module")
def corpus() -> list[bytes]:
    rng = random.Random(15)
    docs = []
    for variant in VARIANTS:
        target = {"target": 21 if variant == "scopa-15" else 11}
        for seats in (2, 3, 4, 6):
            for seed in range(2):
                options = [
                    {},
                    {"rebello": True, "napola": True, "primiera_missing_suit": "compare_present"},
                    {"void_three_kings": False, "forced_capture": False},
                ][(seed + seats) % 3]
                for end, knockout in (
                    (target, False),
                    ({"deals": 1}, True),
                    ({"deals": 2}, False),
                    ({**target, "time_limit_s": 600}, seed == 0),
                ):
                    clock = {"move_s": 15, "bank_s": 30} if "time_limit_s" in end else None
                    docs.append(
                        simulate_match(
                            variant=variant,
                            seats=seats,
                            seed=seed,
                            options=options,
                            end=end,
                            knockout=knockout,
                            clock=clock,
                            policy="greedy" if seed % 2 else "random",
                        )
                    )
                kind = ("timeout", "abandon")[seed % 2]
                outcome = {"kind": kind, "seat": seed % seats, "deal": seed, "play": 7 * seed}
                clock = {"move_s": 15, "bank_s": 30, "total_s": 3600}
                docs.append(
                    simulate_match(
                        variant=variant, seats=seats, seed=seed, outcome=outcome, clock=clock
                    )
                )
    # the rarer ends: scopa-15 without a capture, three tied tie-break deals
    docs.append(simulate_match(variant="scopa-15", seats=3, seed=91, end={"deals": 1}))
    docs.append(simulate_match(seed=1032, end={"deals": 1}, knockout=True, declared=False))
    docs += _foreign_records(8)
    damaged = [bad for doc in docs[::4] for bad in _damaged(doc, rng)]
    return [json.dumps(doc).encode() for doc in docs + damaged]


@pytest.fixture(scope="module")
def pure():
    return engine.native.load_source_copy("_scopa_engine_source")


def test_the_source_copy_is_pure_python(pure):
    verify_module = sys.modules[f"{pure.__name__}.verify"]
    assert verify_module.__file__.endswith("verify.py")
    assert not pure.native.compiled()


def test_compiled_and_source_give_the_same_answer_on_every_record(corpus, pure):
    reasons = set()
    codes = set()
    for data in corpus:
        answer = engine.verify_document(data)
        assert answer == pure.verify_document(data)
        if not answer["valid"]:  # the language changes only the sentences of the errors
            assert engine.verify_document(data, "en") == pure.verify_document(data, "en")
        if answer["valid"]:
            reasons.add(answer["end"]["reason"])
        else:
            codes.update(error["code"] for error in answer["errors"])
    assert reasons == set(EndReason)
    assert {"card_not_in_hand", "wrong_seat", "missing_plays", "extra_deals"} <= codes


def test_the_compiled_loop_is_the_one_installed():
    """After `pip install -e .` with a C compiler (as here and in CI) the hot loop runs compiled;
    a skip says the install fell back to the .py source."""
    if os.environ.get(engine.native.PURE_ENV):
        pytest.skip("SCOPA_ENGINE_PURE is set")
    if not engine.native.MANIFEST.exists():
        pytest.skip("the install compiled nothing (no C compiler or SCOPA_ENGINE_COMPILE=0)")
    assert engine.native.pure_reason is None
    assert engine.native.compiled()


def test_the_environment_variable_forces_the_source():
    code = "import scopa as e; print(e.native.compiled(), e.native.pure_reason)"
    env = {**os.environ, "SCOPA_ENGINE_PURE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.split()[:2] == ["False", "SCOPA_ENGINE_PURE"], result.stderr
