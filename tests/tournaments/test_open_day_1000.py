"""A whole 1,000-line open day through the services, as issue 33 asks: the day built from the
open-day preset, check-in with absentees, three Mitchell rounds, four Danish rounds with the
Mitchell score carried over, a knock-out of 16 seeded from the combined ranking the public page
shows; late entries and withdrawals; results from the desk, the players' phones and verified
records; every checked-in line seated in every round, no rematch; the export holds it all, and
importing it gives the same document back.

Speed: each round's results are written in one batch (``results.written_together``), the way a
group of records is, so the day stays within seconds."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from tests.pages.factories import add_verified_record, winning_deals
from tests.tournaments.conftest import make_tournament
from tournaments import selectors as sel
from tournaments.models import Entry, Match, Stage
from tournaments.services import entries, lifecycle, pairing, results, schedule, stages
from tournaments.services.export import build_document
from tournaments.services.importer import import_document
from tournaments.services.stages import DayShape

pytestmark = pytest.mark.django_db

N_LINES = 1000
ABSENT = 13


_VERDICTS: dict[str, list] = {}


def _verdicts(end):
    """Verdicts of a few simulated match records (the engine replays each once): the round's
    results are these, turn by turn, so the day has varied scores without replaying 3,500."""
    from scopa import simulate_match, verify_document

    key = json.dumps(end, sort_keys=True, default=str)
    if key not in _VERDICTS:
        _VERDICTS[key] = [
            verify_document(simulate_match(end=end, seed=seed)) for seed in range(1, 12)
        ]
    return _VERDICTS[key]


def _play_round(round_row, *, skip=()):
    """Every match of the round with two lines gets a verified record's result, in one batch
    (the path a group of verified records takes: locked together, written per table)."""
    ids = list(
        Match.objects.filter(round=round_row, home__isnull=False, away__isnull=False)
        .exclude(status=Match.Status.DONE)
        .exclude(pk__in=list(skip))
        .order_by("table_number")
        .values_list("pk", flat=True)
    )
    verdicts = _verdicts(round_row.stage.tournament.match_end())
    with transaction.atomic(), results.written_together() as batch:
        held = results.lock_matches(ids)
        batch.preload(held.values())
        for n, match_id in enumerate(ids):
            verdict = verdicts[(match_id * 7 + n) % len(verdicts)]
            results.apply_verified_result(held[match_id], verdict, locked=True)


def _desk_results(round_row, count):
    """A few results typed at the desk, deal by deal."""
    matches = Match.objects.filter(round=round_row, away__isnull=False).exclude(
        status=Match.Status.DONE
    )
    for n, match in enumerate(matches.order_by("-table_number")[:count]):
        results.save_result(match, winning_deals(n % 2, n % 9))


def _seated(round_row):
    """Lines seated in the round (at a table or with a bye), and each line's count."""
    seen: dict[int, int] = {}
    for home, away in Match.objects.filter(round=round_row).values_list("home_id", "away_id"):
        for line in (home, away):
            if line:
                seen[line] = seen.get(line, 0) + 1
    return seen


def _due(tournament):
    """Lines due to play: checked in (or entered late) and not withdrawn."""
    return set(
        Entry.objects.filter(tournament=tournament, withdrawn=False, checked_in=True).values_list(
            "line_id", flat=True
        )
    )


def _pairs(stage):
    return [
        frozenset(pair)
        for pair in Match.objects.filter(
            round__stage=stage, home__isnull=False, away__isnull=False
        ).values_list("home_id", "away_id")
    ]


def _phone_and_record(round_row):
    """One result from the players' phones (a sheet proposed and countersigned) and one from a
    verified match record; the rest of the round is the desk's."""
    import uuid

    from scoresheets.services import links, reports
    from tests.scoresheets.test_reports import SHEET

    matches = list(
        Match.objects.filter(round=round_row, away__isnull=False).order_by("table_number")[:2]
    )
    phone, record = matches
    tournament = round_row.stage.tournament
    home, away = links.link_for(tournament, phone.home), links.link_for(tournament, phone.away)
    reports.submit(home, phone, SHEET, client_key=uuid.uuid4(), based_on="")
    reports.accept(away, phone)
    add_verified_record(record, seed=7)
    return {phone.pk, record.pk}


def test_a_thousand_line_open_day_through_the_services():
    tournament = make_tournament(n_lines=N_LINES, name="Open dei mille")
    for fields in stages.day_stages(
        "open", DayShape(mitchell_rounds=3, danish_rounds=4, knockout=16)
    ):
        stages.add_stage(tournament, **fields)
    mitchell, danish, knockout = Stage.objects.filter(tournament=tournament).order_by("order")
    stages.update_stage(danish, late_entry_until_round=2)
    entries_ = list(Entry.objects.filter(tournament=tournament).order_by("seed"))
    absent = {e.line_id for e in entries_[5 : 5 + ABSENT]}
    pairing.set_check_in(tournament, [e.line_id for e in entries_ if e.line_id not in absent])

    # --- Mitchell: three rounds, everyone checked in seated once per round, no rematch
    for number in range(1, 4):
        round_row = pairing.pair_next_round(mitchell)
        seated = _seated(round_row)
        assert set(seated) == _due(tournament) and set(seated.values()) == {1}
        skip = _phone_and_record(round_row) if number == 1 else set()
        _desk_results(round_row, 3)
        _play_round(round_row, skip=skip)
        if number == 1:
            # a withdrawal after round 1: out of every later draw
            gone = entries_[-1].line
            lifecycle.withdraw_line(tournament, gone)
    pairs = _pairs(mitchell)
    assert len(pairs) == len(set(pairs)), "a Mitchell movement never meets twice"
    schedule.close_stage(mitchell)

    # --- late entries join the Danish at round 1 with the bye score for what they missed
    entries.add_line(tournament, "Ritardatari", [("Giocatore in ritardo", "")])
    late = Entry.objects.get(tournament=tournament, line__name="Ritardatari")
    assert late.checked_in, "a line entered once the check-in list is in use is checked in"
    for _number in range(4):
        round_row = pairing.pair_next_round(danish)
        seated = _seated(round_row)
        assert set(seated) == _due(tournament) and set(seated.values()) == {1}
        _play_round(round_row)
    danish_pairs = _pairs(danish)
    assert len(danish_pairs) == len(set(danish_pairs)), "no rematch while avoidable"
    assert not set(danish_pairs) & set(pairs), "nor a rematch of the Mitchell rounds"

    # --- the knock-out is seeded from the combined ranking the public page shows
    ranking = sel.qualifying_ranking(danish, tournament)
    assert ranking.combined and ranking.going_on == 16
    shown = [row["line"].pk for row in ranking.rows if row["goes_on"]]
    schedule.close_stage(danish)
    first = Match.objects.filter(round__stage=knockout, round__number=1)
    drawn = {line for pair in first.values_list("home_id", "away_id") for line in pair if line}
    assert drawn == set(shown) and len(shown) == 16
    for _round in range(4):
        current = knockout.rounds.order_by("-number").first()
        pending = (
            Match.objects.filter(round__stage=knockout, home__isnull=False, away__isnull=False)
            .exclude(status=Match.Status.DONE)
            .first()
        )
        assert pending is not None, current
        _play_round(pending.round)
    schedule.close_stage(knockout)
    tournament.refresh_from_db()
    assert tournament.status == "finished"

    # --- the export: every line, every stage, every result, and it reads back as JSON
    document = json.loads(json.dumps(build_document(tournament)))
    assert len(document["lines"]) == N_LINES + 1
    assert [s["kind"] for s in document["stages"]] == ["mitchell", "danish", "knockout"]
    played = Match.objects.filter(round__stage__tournament=tournament).count()
    in_doc = sum(len(r["matches"]) for s in document["stages"] for r in s["rounds"])
    assert in_doc == played
    assert document["stages"][1]["pairing"]["advance_count"] == 16

    # --- and it reads back: the import gives the same document (the draws of lots aside, which
    # depend on the new rows' ids)
    copy = import_document(document, slug="open-dei-mille-copia")
    again = json.loads(json.dumps(build_document(copy)))
    for doc in (document, again):
        for stage_doc in doc["stages"]:
            for group in stage_doc["groups"]:
                group.pop("standings")
    assert again["stages"] == document["stages"]
    assert again["lines"] == document["lines"]
