"""The verdict's typed structures still write the JSON stored verdicts, the API and the CLI use.

Key order and the keys a deal entry only sometimes carries are part of that format (clients diff
stored verdicts), so they are asserted here on records that exercise them.
"""

import json

import msgspec

from scopa import EndReason, parse_record, simulate_match, verify, verify_document
from scopa.record import _record_error_from_validation

TOP_KEYS = [
    "valid",
    "errors",
    "deals",
    "totals",
    "winner",
    "margin",
    "declared_mismatches",
    "outcome",
    "sides",
    "seats",
    "end",
]


def test_end_reasons_are_the_strings_verdicts_store():
    assert [reason.value for reason in EndReason] == [
        "target",
        "deals",
        "draw",
        "time_limit",
        "tiebreak",
        "tiebreak_last_capture",
        "no_capture",
        "timeout",
        "abandon",
    ]
    assert all(json.dumps(reason) == f'"{reason.value}"' for reason in EndReason)


def test_the_verdict_object_speaks_enums_and_its_json_plain_strings():
    record = parse_record(simulate_match(seed=3, end={"target": 11}))
    verdict = verify(record)
    assert verdict.end.reason is EndReason.TARGET
    document = verdict.as_dict()
    assert type(document["end"]["reason"]) is str
    assert document["end"] == {"reason": "target", "deal": len(document["deals"]) - 1}
    assert json.loads(json.dumps(document)) == document


def test_a_timed_out_match_keeps_every_key_in_place():
    doc = simulate_match(
        seed=4,
        outcome={"kind": "timeout", "seat": 1, "deal": 1, "play": 9},
        clock={"move_s": 20, "bank_s": 60},
    )
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    assert list(verdict) == [*TOP_KEYS, "penalty", "clock"]
    assert list(verdict["deals"][0]) == ["points", "breakdown", "tiebreak", "void"]
    assert list(verdict["deals"][-1]) == [
        "points",
        "breakdown",
        "tiebreak",
        "void",
        "interrupted",
        "penalty",
    ]
    assert list(verdict["outcome"]) == ["kind", "seat", "side"]
    assert list(verdict["penalty"]) == [
        "deal",
        "offender_side",
        "unsecured",
        "extra_scopa",
        "points",
    ]
    assert list(verdict["clock"]) == [
        "move_s",
        "bank_s",
        "total_s",
        "checked",
        "timeouts",
        "declared_timeout",
        "bank_left_ms",
        "used_ms",
    ]
    assert verdict["end"]["reason"] == "timeout"


def test_an_abandon_before_any_deal_gets_a_penalty_only_entry():
    doc = simulate_match(seed=1)
    doc["deals"] = []
    doc["outcome"] = {"kind": "abandon", "seat": 1}
    verdict = verify_document(doc)
    assert verdict["deals"] == [
        {
            "points": [1, 0],
            "breakdown": [{"scope": 1}, {}],
            "tiebreak": False,
            "void": False,
            "penalty_only": True,
            "penalty": True,
        }
    ]
    assert verdict["end"] == {"reason": "abandon", "deal": None}
    assert list(verdict) == [*TOP_KEYS, "penalty"]


def test_a_time_limit_keeps_time_up_in_deal_last_in_the_outcome():
    doc = simulate_match(
        seed=2,
        clock={"move_s": 10, "bank_s": 5, "total_s": 300},
        end={"target": 11, "time_limit_s": 200},
    )
    verdict = verify_document(doc)
    assert verdict["valid"], verdict["errors"]
    assert list(verdict["outcome"]) == ["kind", "seat", "side", "time_up_in_deal"]
    assert verdict["end"]["reason"] in ("time_limit", "target")


def test_a_validation_message_without_a_field_name_is_still_a_record_error():
    error = _record_error_from_validation(
        msgspec.ValidationError("Object missing required field - at `$.end`")
    )
    assert (error.code, error.field) == ("missing_field", "end.?")
