"""The pure SVG builders: card faces in every deck style, the bracket."""

import xml.etree.ElementTree as ET

import pytest

from tournaments.rendering.bracket import BracketMatch, bracket_svg
from tournaments.rendering.cards import card_name, card_svg, deck_faces, parse_card, rank_label

STYLES = [
    "napoletane",
    "piacentine",
    "siciliane",
    "piemontesi",
    "trevisane",
    "spagnole",
    "francesi",
]


@pytest.mark.parametrize("style", STYLES)
def test_every_card_is_well_formed_svg_with_a_name(style):
    faces = deck_faces(style)
    assert len(faces) == 40
    for code, face in faces.items():
        root = ET.fromstring(face["svg"])
        assert root.get("role") == "img" and root.get("aria-label") == face["name"]
        assert code[:-1] in face["svg"] or rank_label(int(code[:-1]), style) in face["svg"]


def test_names_follow_the_deck_style():
    assert card_name("8S", "napoletane") == "Fante di spade"
    assert card_name("10D", "piacentine") == "Re di denari"
    assert card_name("9C", "spagnole") == "Caballo de copas"
    assert card_name("10S", "francesi") == "K picche"
    assert rank_label(1, "francesi") == "A" and rank_label(8, "spagnole") == "S"
    assert "♥" in card_svg("3C", "francesi")


@pytest.mark.parametrize("bad", ["11D", "0S", "7X", "", "D", "abc"])
def test_parse_card_refuses_non_cards(bad):
    with pytest.raises(ValueError):
        parse_card(bad)


def test_bracket_svg_structure_and_escaping():
    rounds = [
        (
            "Semifinali",
            [
                BracketMatch("A <b>", "B", "11", "3", winner="home", href="/m/1/"),
                BracketMatch("C", "D", "12", "12", winner="away", tiebreak=True),
            ],
        ),
        ("Finale", [BracketMatch("A <b>", "D")]),
    ]
    svg = bracket_svg(rounds, third_place=BracketMatch("B", "C"), title="Tabellone")
    root = ET.fromstring(svg)  # well-formed, names escaped
    assert root.get("role") == "group"
    assert "A &lt;b&gt;" in svg and "<b>" not in svg
    assert svg.count('class="bm-link"') == 2
    assert "bm-won" in svg and "*" in svg
    assert bracket_svg([]) == ""


def test_names_in_the_page_language_come_from_the_engine():
    assert card_name("9C", "spagnole", "it") == "Cavallo di coppe"
    assert card_name("8S", "francesi", "en") == "J of spades"
    assert card_name("1D", "napoletane", "en") == "Ace of coins"
    faces = deck_faces("piacentine", lang="en")
    assert faces["7D"]["name"] in faces["7D"]["svg"]
