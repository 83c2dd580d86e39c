"""Hand-made cases from an independent audit of the engine against rules.md and the seeds.

Each record is built so that the hands and the table are known; the expected answers are worked
out by hand from the rules, not from the engine.
"""

from games.engine import simulate_match, verify_document


def first_error(doc):
    verdict = verify_document(doc)
    assert not verdict["valid"]
    error = verdict["errors"][0]
    return error["code"], error["deal"], error["play"], error["messages"]


def test_missing_deals_sentence_names_the_missing_deal():
    doc = simulate_match(seed=2, end={"target": 11})
    doc["deals"] = doc["deals"][:-1]
    missing = len(doc["deals"])
    code, deal, play, messages = first_error(doc)
    assert (code, deal, play) == ("missing_deals", missing, None)
    assert messages["it"] == (
        f"smazzata {missing}: la partita non è finita (nessuna squadra è in testa da sola con "
        f"almeno 11 punti): manca la smazzata {missing}"
    )
    assert messages["en"] == (
        f"deal {missing}: the match is not over (no side leads alone with at least 11 points): "
        f"deal {missing} is missing"
    )


def test_missing_deals_in_a_fixed_number_of_deals():
    doc = simulate_match(seed=2, end={"deals": 2})
    doc["deals"] = doc["deals"][:1]
    code, deal, play, messages = first_error(doc)
    assert (code, deal, play) == ("missing_deals", 1, None)
    assert messages["it"] == (
        "smazzata 1: la partita non è finita (smazzate giocate: 1 su 2): manca la smazzata 1"
    )
