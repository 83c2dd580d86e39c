"""Property tests: simulated matches verify, cards are conserved, one changed play is caught at
its own position (or is a legal alternative), and no input makes the parser raise anything but
RecordError."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scopa import (
    CARD_CODES,
    CARD_INDEX,
    DEFAULT_OPTIONS,
    Options,
    RecordError,
    legal_moves,
    legal_takes,
    parse_record,
    replay_timeline,
    rules_for,
    simulate_match,
    verify,
    verify_document,
)
from scopa.rules import check_take
from scopa.state import DealState

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

variants = st.sampled_from(["scopa", "scopa-d-assi", "scopa-15"])
seat_counts = st.sampled_from([2, 3, 4, 6])
option_sets = st.fixed_dictionaries(
    {},
    optional={
        "rebello": st.booleans(),
        "napola": st.booleans(),
        "primiera_missing_suit": st.sampled_from(["loses", "compare_present"]),
        "void_three_kings": st.booleans(),
        "forced_capture": st.booleans(),
    },
)
ends = st.one_of(
    st.builds(lambda t: {"target": t}, st.sampled_from([7, 11, 21])),
    st.builds(lambda n: {"deals": n}, st.integers(1, 3)),
)


@st.composite
def matches(draw):
    return simulate_match(
        variant=draw(variants),
        seats=draw(seat_counts),
        options=draw(option_sets),
        end=draw(ends),
        knockout=draw(st.booleans()),
        seed=draw(st.integers(0, 10**9)),
        policy=draw(st.sampled_from(["random", "greedy"])),
    )


@SETTINGS
@given(matches())
def test_simulated_matches_verify_with_consistent_scores(doc):
    verdict = verify_document(json.dumps(doc))
    assert verdict["valid"], verdict["errors"]
    assert verdict["declared_mismatches"] == []
    sides = verdict["sides"]
    assert [sum(d["points"][s] for d in verdict["deals"]) for s in range(sides)] == verdict[
        "totals"
    ]
    for entry in verdict["deals"]:
        assert entry["points"] == [sum(b.values()) for b in entry["breakdown"]]
    assert len(verdict["deals"]) == len(doc["deals"])
    if verdict["winner"] is not None:
        assert verdict["margin"] >= 0
    elif doc["knockout"] and doc["variant"] != "scopa-15":
        raise AssertionError("a knock-out match always has a winner")


@SETTINGS
@given(variants, seat_counts, st.integers(0, 10**9))
def test_forty_cards_are_conserved_every_play(variant, seats, seed):
    doc = simulate_match(variant=variant, seats=seats, seed=seed, end={"deals": 1})
    record = parse_record(doc)
    rules = rules_for(record.variant, record.options)
    sides = record.sides
    for deal in record.deals:
        state = DealState(rules, seats, sides, deal.dealer, deal.deck)
        for play in deal.plays:
            assert (play.card, play.take) in [tuple(m) for m in legal_moves(state)]
            state.apply(play.card, play.take)
            cards = [c for hand in state.hands for c in hand] + state.table
            cards += list(deal.deck[state.deck_pos :])
            captured = 0
            for mask in state.captured:
                assert not captured & mask
                captured |= mask
            assert len(cards) + captured.bit_count() == 40
            assert len(set(cards)) == len(cards) and not any(captured >> c & 1 for c in cards)
        assert (state.finished and state.table == []) or state.last_capturer is None


@st.composite
def mutated_play(draw):
    doc = draw(matches())
    deals = [i for i, d in enumerate(doc["deals"]) if d.get("plays")]
    d = draw(st.sampled_from(deals))
    p = draw(st.integers(0, len(doc["deals"][d]["plays"]) - 1))
    play = doc["deals"][d]["plays"][p]
    kind = draw(st.sampled_from(["card", "take_add", "take_drop", "take_set", "seat"]))
    if kind == "card":
        play["card"] = draw(st.sampled_from(CARD_CODES))
    elif kind == "take_add":
        play["take"] = [*play["take"], draw(st.sampled_from(CARD_CODES))]
    elif kind == "take_drop" and play["take"]:
        play["take"] = play["take"][1:]
    elif kind == "take_set":
        play["take"] = draw(st.lists(st.sampled_from(CARD_CODES), max_size=4, unique=True))
    else:
        play["seat"] = (play["seat"] + draw(st.integers(1, len(doc["seats"]) - 1))) % len(
            doc["seats"]
        )
    return doc, d, p


@SETTINGS
@given(mutated_play())
def test_one_changed_play_is_caught_at_its_position_or_is_a_legal_alternative(case):
    doc, d, p = case
    record = parse_record(json.dumps(doc))
    verdict = verify(record).as_dict()
    rules = rules_for(record.variant, record.options)
    deal = record.deals[d]
    state = DealState(rules, len(record.seats), record.sides, deal.dealer, deal.deck)
    for play in deal.plays[:p]:
        state.apply(play.card, play.take)
    changed = deal.plays[p]
    legal = {(m.card, frozenset(m.take)) for m in legal_moves(state)}
    seat_ok = changed.seat is None or changed.seat == state.to_move
    is_legal = (
        seat_ok
        and (changed.card, frozenset(changed.take)) in legal
        and len(set(changed.take)) == len(changed.take)
    )
    if is_legal:
        assert not verdict["errors"] or (
            verdict["errors"][0]["deal"],
            verdict["errors"][0]["play"] or 0,
        ) >= (d, p)
    else:
        assert not verdict["valid"]
        first = verdict["errors"][0]
        assert (first["deal"], first["play"]) == (d, p), first


tables = st.lists(st.sampled_from(range(40)), min_size=0, max_size=9, unique=True)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["scopa", "scopa-d-assi", "scopa-15"]),
    st.booleans(),
    tables,
    st.integers(0, 39),
    st.data(),
)
def test_fast_check_agrees_with_legal_move_generation(variant, forced, table, card, data):
    rules = rules_for(variant, Options.for_variant(variant, {"forced_capture": forced}))
    table = [c for c in table if c != card]
    take = tuple(data.draw(st.lists(st.sampled_from(table), unique=True)) if table else [])
    legal = {frozenset(t) for t in legal_takes(rules, card, table)}
    assert (check_take(rules, card, table, take) is None) == (frozenset(take) in legal)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def only_record_errors(data):
    try:
        record = parse_record(data)
    except RecordError as error:
        assert error.code and error.message("it") and error.message("en")
        return
    verify(record)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200), json_values.map(json.dumps)))
def test_arbitrary_input_only_raises_record_error(data):
    only_record_errors(data)


BASE = simulate_match(variant="scopa", seats=2, seed=99, end={"target": 7})


@st.composite
def damaged_records(draw):
    doc = json.loads(json.dumps(BASE))
    path_choices = [
        ("variant",),
        ("end",),
        ("seats",),
        ("options",),
        ("outcome",),
        ("deals", 0),
        ("deals", 0, "deck"),
        ("deals", 0, "deck", 3),
        ("deals", 0, "plays", 2),
        ("deals", 0, "plays", 2, "take"),
        ("deals", 0, "dealer"),
        ("knockout",),
        ("clock",),
    ]
    path = draw(st.sampled_from(path_choices))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = draw(json_values)
    return doc


@settings(max_examples=150, deadline=None)
@given(damaged_records())
def test_damaged_records_only_raise_record_error_and_verify_never_crashes(doc):
    only_record_errors(json.dumps(doc))
    only_record_errors(doc)
    answer = verify_document(json.dumps(doc))
    assert isinstance(answer["valid"], bool)


def test_default_options_cover_every_variant():
    assert set(DEFAULT_OPTIONS) == {"scopa", "scopa-d-assi", "scopa-15"}
    assert CARD_INDEX["10S"] == 39


@settings(max_examples=40, deadline=None)
@given(variants, st.sampled_from([2, 4]), st.booleans(), st.integers(0, 10**9), st.data())
def test_hot_loop_accepts_exactly_what_check_take_accepts(variant, seats, forced, seed, data):
    from scopa.record import PlayInput
    from scopa.verify import _fast_replay

    options = {"forced_capture": forced}
    doc = simulate_match(variant=variant, seats=seats, seed=seed, options=options, end={"deals": 1})
    record = parse_record(doc)
    rules = rules_for(record.variant, record.options)
    deal = next(d for d in record.deals if not d.void)
    stop = data.draw(st.integers(0, len(deal.plays) - 1))

    def position() -> DealState:  # built again for each trial: compiled states cannot be copied
        state = DealState(rules, seats, record.sides, deal.dealer, deal.deck)
        for play in deal.plays[:stop]:
            state.apply(play.card, play.take)
        return state

    state = position()
    for card in state.hands[state.to_move]:
        table = state.table
        candidates = [()] + [(c,) for c in table]
        candidates += (
            [tuple(data.draw(st.lists(st.sampled_from(table), max_size=4)))] if table else []
        )
        for take in candidates:
            trial = position()
            play = PlayInput(card=CARD_CODES[card], take=[CARD_CODES[c] for c in take])
            fast = _fast_replay(rules, trial, [play], seats, record.sides) is None
            assert fast == (check_take(rules, card, table, take) is None), (card, take, table)


@settings(max_examples=100, deadline=None)
@given(
    variants,
    seat_counts,
    st.permutations(CARD_CODES),
    st.lists(
        st.tuples(
            st.sampled_from(CARD_CODES),
            st.lists(st.sampled_from(CARD_CODES), max_size=3),
            st.one_of(st.none(), st.integers(0, 5)),
        ),
        max_size=40,
    ),
    st.sampled_from(["completed", "timeout", "abandon"]),
)
def test_nonsense_plays_never_crash_the_verifier(variant, seats, deck, plays, kind):
    deal = {"dealer": 0, "deck": list(deck), "plays": []}
    for card, take, seat in plays:
        play = {"card": card, "take": take}
        if seat is not None:
            play["seat"] = seat % seats
        deal["plays"].append(play)
    doc = {
        "schema": "scopa-match/1",
        "variant": variant,
        "end": {"deals": 1},
        "seats": [str(i) for i in range(seats)],
        "deals": [deal],
        "outcome": {"kind": kind} | ({} if kind == "completed" else {"seat": 0}),
    }
    answer = verify_document(json.dumps(doc))
    assert not answer.get("malformed"), answer
    assert isinstance(answer["valid"], bool)
    replay_timeline(doc)
