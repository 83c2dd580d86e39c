"""Our copy of networkx's maximum-weight matching gives networkx's answer, ties included, and
the Swiss round paired through it is the one the unpatched library pairs."""

from __future__ import annotations

import contextlib
import random
import threading

import networkx
import pytest
from caissify_pairings.fpc import check_trf
from caissify_pairings.rtg import generate_tournament
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.algorithms import blossom, swiss

NETWORKX = swiss._networkx_matching


@st.composite
def graphs(draw):
    """Small graphs with many equal weights (ties, blossoms) or huge ones, odd node labels and
    insertion orders, now and then a self-loop."""
    n = draw(st.integers(0, 14))
    names = draw(st.permutations([f"p{i}" for i in range(n)]))
    top = draw(st.sampled_from([1, 2, 3, 100, 2**300]))
    low = draw(st.sampled_from([-2, 0, 1])) if top < 100 else 1
    graph = networkx.Graph()
    graph.add_nodes_from(names)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i:]]
    for a, b in draw(st.lists(st.sampled_from(pairs), max_size=40)) if pairs else []:
        graph.add_edge(a, b, weight=draw(st.integers(low, top)))
    return graph


@settings(max_examples=400, deadline=None)
@given(graphs(), st.booleans())
def test_same_matching_as_networkx(graph, maxcardinality):
    assert blossom.max_weight_matching(graph._adj, maxcardinality) == NETWORKX(
        graph, maxcardinality=maxcardinality
    )


@pytest.mark.parametrize("seed", range(40))
def test_same_matching_as_networkx_on_larger_dense_graphs(seed):
    rng = random.Random(seed)
    n = rng.randint(20, 60)
    graph = networkx.Graph()
    graph.add_nodes_from(range(n))
    top, density = rng.choice([1, 2, 5, 2**400]), rng.random()
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < density:
                graph.add_edge(a, b, weight=rng.randint(1, top))
    for maxcardinality in (False, True):
        assert blossom.max_weight_matching(graph._adj, maxcardinality) == NETWORKX(
            graph, maxcardinality=maxcardinality
        )


def test_weights_that_are_not_integers_go_to_networkx():
    graph = networkx.Graph()
    graph.add_edge(1, 2, weight=1.5)
    graph.add_edge(2, 3, weight=2)
    graph.add_edge(3, 4, weight=True)
    assert blossom.max_weight_matching(graph._adj, True) is None
    with swiss._fast_matching():
        assert networkx.max_weight_matching(graph, maxcardinality=True) == NETWORKX(
            graph, maxcardinality=True
        )


def _history(n_lines, n_rounds, seed, fast=True):
    """Rounds paired one after another with random VP results: [(lines, played, pairing)]."""
    rng = random.Random(seed)
    start = list(range(1, n_lines + 1))
    rng.shuffle(start)
    rounds, out = [], []
    for number in range(1, n_rounds + 1):
        lines, played = swiss.line_histories(start, rounds)
        pairing = _pair(lines, played, number, n_rounds, fast)
        out.append((lines, played, pairing))
        vp = {}
        for home, away in pairing.pairs:
            won = rng.choice([0, 10, 20, rng.randint(0, 20)])
            vp[home], vp[away] = won, 20 - won
        byes = [pairing.bye] if pairing.bye is not None else []
        vp.update(dict.fromkeys(byes, 12))
        rounds.append(swiss.PlayedRound(pairs=pairing.pairs, byes=byes, vp=vp))
    return out


def _pair(lines, played, number, total, fast):
    real = swiss._fast_matching
    if not fast:
        swiss._fast_matching = contextlib.nullcontext
    try:
        return swiss.pair_swiss(
            lines, played, round_number=number, total_rounds=total, bye_score=12
        )
    finally:
        swiss._fast_matching = real


@pytest.mark.parametrize(
    ("n_lines", "n_rounds", "seed"), [(10, 9, 1), (13, 9, 2), (21, 7, 3), (30, 6, 4), (45, 4, 5)]
)
def test_pairings_are_the_unpatched_librarys(n_lines, n_rounds, seed):
    for number, (lines, played, pairing) in enumerate(_history(n_lines, n_rounds, seed), 1):
        assert _pair(lines, played, number, n_rounds, fast=False) == pairing


def test_every_matching_the_swiss_engine_asks_for_is_networkxs(monkeypatch):
    asked = []
    ours = blossom.max_weight_matching

    def compare(adjacency, maxcardinality=False, weight="weight"):
        graph = networkx.Graph()
        graph.add_nodes_from(adjacency)
        graph.add_edges_from(
            (a, b, data) for a, row in adjacency.items() for b, data in row.items()
        )
        answer = ours(adjacency, maxcardinality, weight)
        assert answer == NETWORKX(graph, maxcardinality=maxcardinality, weight=weight)
        asked.append(len(adjacency))
        return answer

    monkeypatch.setattr(blossom, "max_weight_matching", compare)
    _history(25, 8, seed=7)
    assert len(asked) > 100


@pytest.mark.parametrize(("n_players", "n_rounds", "seed"), [(16, 7, 4), (23, 9, 5)])
def test_library_checks_pass_through_our_matcher(n_players, n_rounds, seed):
    trf = generate_tournament(num_players=n_players, num_rounds=n_rounds, seed=seed)
    with swiss._fast_matching():
        # the checker re-pairs every round of the (unpatched) tournament and compares
        report = check_trf(trf)
    assert report["summary"]["total_discrepancies"] == 0
    assert report["summary"]["rounds_checked"] == n_rounds


def test_networkx_gets_its_own_function_back_and_other_threads_use_networkx(monkeypatch):
    seen = []

    def spy(adjacency, maxcardinality=False, weight="weight"):
        seen.append(threading.current_thread().name)
        return ours(adjacency, maxcardinality, weight)

    ours = blossom.max_weight_matching
    monkeypatch.setattr(blossom, "max_weight_matching", spy)
    graph = networkx.complete_graph(6)
    with swiss._fast_matching():
        assert networkx.max_weight_matching is not NETWORKX
        other = threading.Thread(target=networkx.max_weight_matching, args=(graph,), name="other")
        other.start()
        other.join()
        networkx.max_weight_matching(graph)
    assert seen == [threading.current_thread().name]
    assert networkx.max_weight_matching is NETWORKX
    with pytest.raises(RuntimeError), swiss._fast_matching():
        raise RuntimeError
    assert networkx.max_weight_matching is NETWORKX
