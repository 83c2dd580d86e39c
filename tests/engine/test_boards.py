"""Duplicate boards: reproducible from the seed, never a deck to deal again, the printed sheet and
the QR code rebuild the board exactly, and the verifier holds a record to its boards."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scopa import (
    CARD_CODES,
    Board,
    BoardError,
    board_from_qr,
    board_from_sheet,
    board_set,
    make_board,
    parse_record,
    qr_payload,
    sheet_text,
    simulate_match,
    verify,
    verify_on_boards,
)
from scopa.boards import shuffled_deck, triggers_redeal

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

variants = st.sampled_from(["scopa", "scopa-d-assi", "scopa-15"])
seat_counts = st.sampled_from([2, 3, 4, 6])
seeds = st.text(min_size=0, max_size=12)
numbers = st.integers(1, 40)


@st.composite
def boards(draw):
    return make_board(
        draw(seeds), draw(numbers), variant=draw(variants), seat_count=draw(seat_counts)
    )


def test_the_shuffle_is_pinned_by_hand():
    """The recipe is part of the archive: this exact deck must come out on every machine."""
    deck = shuffled_deck(b"scopa-board/1|torneo-2026|scopa|4|1|0")
    assert sorted(deck) == list(range(40))
    assert " ".join(CARD_CODES[c] for c in deck[:8]) == "6B 7B 1D 8C 8S 7D 5D 7C"


@SETTINGS
@given(seeds, variants, seat_counts, st.integers(1, 8))
def test_a_board_set_is_reproducible_from_its_seed(seed, variant, seats, count):
    first = board_set(seed, count, variant=variant, seat_count=seats)
    assert first == board_set(seed, count, variant=variant, seat_count=seats)
    assert [board.number for board in first] == list(range(1, count + 1))
    for board in first:
        assert sorted(board.deck) == list(range(40))
        assert board.dealer == (board.number - 1) % seats


def test_other_seeds_give_other_boards():
    assert board_set("a", 4)[0].deck != board_set("b", 4)[0].deck
    assert board_set("a", 4)[0].deck != board_set("a", 4)[1].deck


@SETTINGS
@given(seeds, numbers, variants, seat_counts, st.booleans())
def test_a_board_never_triggers_its_variants_redeal_rule(seed, number, variant, seats, void):
    options = {"void_three_kings": void}
    board = make_board(seed, number, variant=variant, seat_count=seats, options=options)
    assert not triggers_redeal(board.deck, seats, void and variant != "scopa-15")
    record = simulate_match(
        variant=variant, seats=seats, options=options, decks=[(board.dealer, board.deck)]
    )
    assert not any(deal.get("void") for deal in record["deals"])
    assert verify(parse_record(record)).valid


def test_a_seed_whose_first_deck_shows_three_kings_draws_again():
    """Find a seed whose attempt 0 would be void: the board is attempt 1 (scopa), while scopa a
    15, which has no kings rule, keeps its attempt 0."""
    for i in range(5000):
        raw = shuffled_deck(f"scopa-board/1|k{i}|scopa|2|1|0".encode())
        if triggers_redeal(raw, 2, True):
            board = make_board(f"k{i}", 1, variant="scopa", seat_count=2)
            assert board.deck == shuffled_deck(f"scopa-board/1|k{i}|scopa|2|1|1".encode())
            assert not triggers_redeal(board.deck, 2, True)
            fifteen = make_board(f"k{i}", 1, variant="scopa-15", seat_count=2)
            assert fifteen.deck == shuffled_deck(f"scopa-board/1|k{i}|scopa-15|2|1|0".encode())
            return
    pytest.fail("no seed with three kings on the table among 5000")


@SETTINGS
@given(boards())
def test_a_board_rebuilt_from_its_sheet_deals_exactly_the_stored_board(board):
    assert board_from_sheet(sheet_text(board)) == board
    assert board_from_sheet(sheet_text(board, "en")) == board
    assert board_from_qr(qr_payload(board)) == board
    assert Board.from_dict(board.as_dict()) == board


def test_the_sheet_by_hand():
    board = make_board("serata", 3, variant="scopa", seat_count=4)
    text = sheet_text(board)
    lines = text.splitlines()
    assert lines[0] == "SMAZZATA PREPARATA N. 3"
    assert "mazziere: posto 2" in lines
    first = board.deck[0]
    assert lines[5].startswith(f" 1. {CARD_CODES[first]}")
    # seat 3 sits after the dealer: it gets the 1st, 5th and 9th card
    hand3 = " ".join(CARD_CODES[board.deck[i]] for i in (0, 4, 8))
    assert f"controllo, prima mano del posto 3: {hand3}" in lines
    table = " ".join(CARD_CODES[c] for c in board.deck[12:16])
    assert f"controllo, in tavola: {table}" in lines


def test_a_sheet_whose_check_disagrees_is_refused():
    board = make_board("serata", 1, variant="scopa", seat_count=2)
    lines = sheet_text(board).splitlines()
    # a volunteer swapped two cards of the deck, but the check still shows the stored board
    a, b = 5, 12  # position 1 is on line 5
    lines[a], lines[b] = (
        lines[a][:4] + lines[b][4:],
        lines[b][:4] + lines[a][4:],
    )
    with pytest.raises(BoardError) as caught:
        board_from_sheet("\n".join(lines))
    assert caught.value.code in {"check_table", "check_hand"}
    assert "il controllo non torna" in caught.value.message("it")


@pytest.mark.parametrize(
    "text", ["", "SMAZZATA PREPARATA N. 1\n", "SB1:SCOPA:4:1:0:xyz", "SB1:SCOPA:5:1:0:" + "0" * 40]
)
def test_unreadable_sheets_and_codes_raise_board_error_only(text):
    with pytest.raises(BoardError):
        board_from_sheet(text) if text.startswith("S") and "\n" in text else board_from_qr(text)


@st.composite
def rounds(draw):
    variant, seats = draw(variants), draw(seat_counts)
    first = draw(st.integers(1, 10))
    count = draw(st.integers(1, 3))
    all_boards = board_set(draw(seeds), first + count - 1, variant=variant, seat_count=seats)
    return all_boards[first - 1 :], draw(st.integers(0, 2**16))


@SETTINGS
@given(rounds())
def test_every_record_simulated_on_its_boards_is_accepted(round_):
    played, seed = round_
    record = simulate_match(
        variant=played[0].variant,
        seats=played[0].seat_count,
        decks=[(b.dealer, b.deck) for b in played],
        seed=seed,
    )
    verdict = verify_on_boards(parse_record(record), played)
    assert verdict.valid, [e.message("en") for e in verdict.errors]
    assert verdict.as_dict() == verify(parse_record(record)).as_dict()


@SETTINGS
@given(rounds(), st.data())
def test_a_record_whose_deal_differs_from_its_board_in_one_card_is_refused(round_, data):
    played, seed = round_
    record = simulate_match(
        variant=played[0].variant,
        seats=played[0].seat_count,
        decks=[(b.dealer, b.deck) for b in played],
        seed=seed,
    )
    d = data.draw(st.integers(0, len(played) - 1))
    i, j = sorted(data.draw(st.lists(st.integers(0, 39), min_size=2, max_size=2, unique=True)))
    deck = record["deals"][d]["deck"]
    deck[i], deck[j] = deck[j], deck[i]  # one card out of place (and the one it displaced)
    verdict = verify_on_boards(parse_record(record), played)
    assert not verdict.valid
    first = verdict.errors[0]
    assert first.code == "board_deck"
    assert first.deal == d
    assert first.params["position"] == i + 1
    assert f"smazzata preparata n. {played[d].number}" in first.message("it")


def test_the_referee_sentence_for_a_swapped_deal():
    played = board_set("club", 2, variant="scopa", seat_count=2)
    record = simulate_match(variant="scopa", seats=2, decks=[(b.dealer, b.deck) for b in played])
    other = board_set("other", 1, variant="scopa", seat_count=2)[0]
    record["deals"][0]["deck"] = other.deck_codes
    verdict = verify_on_boards(parse_record(record), played)
    assert not verdict.valid and verdict.winner is None
    message = verdict.errors[0].message("it")
    assert message.startswith("smazzata 0: il mazzo non è quello della smazzata preparata n. 1")
    assert "alla carta 1 c'è" in message
    english = verdict.errors[0].message("en")
    assert "the deck is not board 1's: card 1 is" in english


def test_a_record_on_the_wrong_dealer_game_or_length_is_refused():
    played = board_set("club", 2, variant="scopa", seat_count=2)
    record = simulate_match(variant="scopa", seats=2, decks=[(b.dealer, b.deck) for b in played])
    assert verify_on_boards(parse_record(record), played[:1]).errors[0].code == "board_end"
    four = board_set("club", 2, variant="scopa", seat_count=4)
    assert verify_on_boards(parse_record(record), four).errors[0].code == "board_game"
    shifted = board_set("club", 3, variant="scopa", seat_count=2)[1:]
    assert verify_on_boards(parse_record(record), shifted).errors[0].code == "board_dealer"
    longer = dict(record, deals=[*record["deals"], record["deals"][0]])
    assert verify_on_boards(parse_record(longer), played).errors[0].code == "board_extra_deal"
