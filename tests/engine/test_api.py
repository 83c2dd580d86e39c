"""The public API others build on: exports, presets as data, timeline, legal moves, schema."""

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import scopa as engine
from scopa import (
    CARD_INDEX,
    DECK_STYLES,
    DEFAULT_OPTIONS,
    VARIANTS,
    DealState,
    Options,
    card_name,
    legal_moves,
    record_json_schema,
    replay_timeline,
    rules_for,
    simulate_match,
    verify_document,
)

ROOT = Path(__file__).resolve().parents[2]


def test_public_names():
    for name in (
        "parse_record",
        "verify",
        "verify_document",
        "legal_moves",
        "replay_timeline",
        "simulate_match",
        "VARIANTS",
        "DEFAULT_OPTIONS",
        "DECK_STYLES",
        "Options",
        "RecordError",
        "EngineError",
    ):
        assert hasattr(engine, name), name
    assert issubclass(engine.RecordError, engine.EngineError)


def test_presets_are_data_with_both_languages():
    assert set(VARIANTS) == {"scopa", "scopa-d-assi", "scopa-15"}
    assert set(DECK_STYLES) == {
        "napoletane",
        "piacentine",
        "siciliane",
        "piemontesi",
        "trevisane",
        "spagnole",
        "francesi",
    }
    for style in DECK_STYLES.values():
        assert style["it"] and style["en"]
    assert DEFAULT_OPTIONS["scopa"]["void_three_kings"] is True
    assert Options.for_variant("scopa-15").forced_capture is True
    assert Options.for_variant("scopa", {"rebello": True}).rebello is True


def test_card_names():
    assert card_name(CARD_INDEX["1D"], "it", article=True) == "l'asso di denari"
    assert card_name(CARD_INDEX["8S"], "it", article=True) == "il fante di spade"
    assert card_name(CARD_INDEX["10C"], "it") == "re di coppe"
    assert card_name(CARD_INDEX["9B"], "en") == "knight of clubs"
    assert card_name(CARD_INDEX["10D"], "it", style="francesi") == "K di quadri"


def test_display_options_do_not_change_the_verdict():
    doc = simulate_match(seed=12)
    plain = verify_document(doc)
    doc["options"].update(carte_viste=True, carte_scoperte=True, deck_style="piemontesi")
    assert verify_document(doc) == plain


def test_legal_moves_at_the_start_of_a_deal():
    rules = rules_for("scopa", Options.for_variant("scopa"))
    deck = list(range(40))
    state = DealState(rules, 2, 2, 1, deck)
    moves = legal_moves(state)
    assert {m.card for m in moves} == set(state.hands[0])
    assert all(m.as_dict()["card"] for m in moves)


def test_position_gives_the_recorded_play_among_the_legal_moves():
    doc = simulate_match(seed=8, variant="scopa-15", seats=3)
    record = engine.parse_record(doc)
    for play_index in (0, 7, 20, 35):
        state = engine.position(record, 1, play_index)
        made = record.deals[1].plays[play_index]
        assert (made.card, made.take) in [tuple(m) for m in legal_moves(state)]


def test_replay_timeline_frames():
    doc = simulate_match(seed=3, seats=4)
    frames = replay_timeline(doc)
    plays = sum(len(d.get("plays", [])) for d in doc["deals"])
    assert len(frames) == plays + len(doc["deals"])
    json.dumps(frames)
    first_play = frames[1]
    assert first_play["deal"] == 0 and first_play["play"] == 0
    assert set(first_play) >= {"hands", "table", "captured", "scope", "move", "to_move"}
    assert len(first_play["hands"]) == 4 and len(first_play["captured"]) == 2
    last = [f for f in frames if f["deal"] == 0][-1]
    assert sum(len(c) for c in last["captured"]) == 40 and last["table"] == []


def test_published_schema_is_current():
    published = json.loads((ROOT / "docs" / "record-schema.json").read_text())
    assert published == json.loads(json.dumps(record_json_schema()))


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(["scopa", "scopa-d-assi", "scopa-15"]),
    st.sampled_from([2, 3, 4, 6]),
    st.sampled_from(["timeout", "abandon"]),
    st.integers(0, 5),
    st.integers(0, 3),
    st.integers(0, 35),
    st.integers(0, 10**6),
    st.booleans(),
)
def test_simulated_timeouts_and_abandons_verify(
    variant, seats, kind, seat, deal, play, seed, clock
):
    doc = simulate_match(
        variant=variant,
        seats=seats,
        seed=seed,
        outcome={"kind": kind, "seat": seat % seats, "deal": deal, "play": play},
        clock={"move_s": 15, "bank_s": 30, "total_s": 3600} if clock else None,
    )
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    offender = verdict["outcome"]["side"]
    assert verdict["winner"] != offender
    sides = verdict["sides"]
    assert [sum(d["points"][s] for d in verdict["deals"]) for s in range(sides)] == verdict[
        "totals"
    ]
    if clock and kind == "timeout":
        assert verdict["clock"]["declared_timeout"] in ("confirmed", "not_checkable")
