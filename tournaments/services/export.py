"""The federation export, format ``scopa-tournament-export/1`` (documented in docs/export.md).

The document uses natural keys only (tournament slug, federation ids, and references ``P1``,
``L1``, ``M1`` local to the file, numbered in a stable order), never database ids, so exporting,
importing on another instance and exporting again gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections import defaultdict
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Max
from django.utils import timezone

from tournaments import standings_columns
from tournaments.algorithms.prizes import PrizeSpec, RankedLine, allocate, handing_order
from tournaments.models import (
    BoardAdjustment,
    BoardSet,
    ChangeLog,
    Entry,
    ForbiddenPairing,
    Group,
    GroupMember,
    LineMember,
    Match,
    MatchResult,
    Outcome,
    Penalty,
    PenaltyRule,
    Player,
    Prize,
    ResultVersion,
    Round,
    Stage,
    Tournament,
)
from tournaments.services import duplicate, pairing
from tournaments.services.csv_cells import write_csv
from tournaments.services.results import deals_in_force

logger = logging.getLogger(__name__)

FORMAT = "scopa-tournament-export/1"
RANGE_FORMAT = "scopa-results-export/1"
CACHE_TTL = 3600


def _date(value):
    return value.isoformat() if value else None


def _datetime(value):
    if value is None:
        return None
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _vp_table(table) -> dict:
    return {
        "slug": table.slug,
        "name": table.name,
        "kind": table.kind,
        "target_points": table.target_points,
        "deals_min": table.deals_min,
        "deals_max": table.deals_max,
        "win_vp": table.win_vp,
        "draw_vp": table.draw_vp,
        "loss_vp": table.loss_vp,
        "timeout_min_vp": table.timeout_min_vp,
        "rows": [
            [r.vp_winner, r.vp_loser, r.mp_from, r.mp_to]
            for r in sorted(table.rows.all(), key=lambda r: r.mp_from)
        ],
    }


def _sorted(value):
    """JSON with object keys sorted (jsonb reorders keys; the export must not depend on it)."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _none_last(value):
    return (value is None, value if value is not None else 0)


def build_document(tournament: Tournament, *, full: bool = False) -> dict:
    """The export of one tournament as plain data (key order is part of the format).

    The public export (``full`` False) keeps a running duplicate stage's secrets: a table that
    holds a board still secret is exported as not played yet, the stage's standings are
    withheld while it has such a table (their match totals count it), and a secret board
    shows its number alone. The organizer's ``full`` export (``access.sees_secret_boards``; the
    command line) carries every result and board, so it can be imported; the seed is shown to
    no one before the stage is closed."""
    t = tournament
    entries = list(Entry.objects.filter(tournament=t).select_related("line"))
    stages = list(Stage.objects.filter(tournament=t).order_by("order"))
    groups = list(
        Group.objects.filter(stage__tournament=t).order_by("stage__order", "order", "name")
    )
    rounds = list(Round.objects.filter(stage__tournament=t).order_by("stage__order", "number"))
    matches = list(
        Match.objects.filter(round__stage__tournament=t).select_related("round__stage", "group")
    )
    matches.sort(
        key=lambda m: (m.round.stage.order, m.round.number, *_none_last(m.table_number), m.id)
    )
    match_ids = [m.id for m in matches]
    deals = deals_in_force(match_ids)
    results: defaultdict[int, dict[int, MatchResult]] = defaultdict(dict)
    penalties: defaultdict[int, list[Penalty]] = defaultdict(list)
    for penalty in Penalty.objects.filter(match_id__in=match_ids).order_by("id"):
        penalties[penalty.match_id].append(penalty)
    rulings: defaultdict[int, list[BoardAdjustment]] = defaultdict(list)
    for ruling in BoardAdjustment.objects.filter(match_id__in=match_ids).order_by("board"):
        rulings[ruling.match_id].append(ruling)
    for r in MatchResult.objects.filter(match_id__in=match_ids):
        results[r.match_id][r.line_id] = r
    withheld: set[int] = set()  # matches shown as not played yet
    secret_stages: set[int] = set()  # stages whose standings are withheld
    if not full:
        for board_set in BoardSet.objects.filter(stage__in=stages).select_related("stage"):
            secret = duplicate.secret_tables(board_set)
            withheld |= secret
            if secret:
                secret_stages.add(board_set.stage_id)

    # Lines: entries by seed (none last), name; then any line met in a match but not entered.
    entries.sort(key=lambda e: (*_none_last(e.seed), e.line.name, e.id))
    line_ids = [e.line_id for e in entries]
    extra: set[int] = set()
    for m in matches:
        extra.update(x for x in (m.home_id, m.away_id) if x and x not in line_ids)
    gm = list(GroupMember.objects.filter(group__in=groups))
    extra.update(g.line_id for g in gm if g.line_id not in line_ids)
    line_ids += sorted(extra)
    line_ref = {lid: f"L{i}" for i, lid in enumerate(line_ids, start=1)}
    members: defaultdict[int, list[LineMember]] = defaultdict(list)
    lm = LineMember.objects.filter(line_id__in=line_ids).select_related("player", "line")
    players: dict[int, Player] = {}
    line_names: dict[int, str] = {}
    line_clubs: dict[int, str] = {}
    for member in lm:
        members[member.line_id].append(member)
        players[member.player_id] = member.player
        line_names[member.line_id] = member.line.name
        line_clubs[member.line_id] = member.line.club
    for e in entries:
        line_names[e.line_id] = e.line.name
        line_clubs[e.line_id] = e.line.club
    ordered_players = sorted(
        players.values(), key=lambda p: (p.name, p.federation_id, p.club, p.city, p.id)
    )
    player_ref = {p.id: f"P{i}" for i, p in enumerate(ordered_players, start=1)}
    match_ref = {m.id: f"M{i}" for i, m in enumerate(matches, start=1)}
    entry_of = {e.line_id: e for e in entries}

    def lref(line_id: int | None) -> str | None:
        return line_ref.get(line_id) if line_id else None

    def mref(match_id: int | None) -> str | None:
        return match_ref.get(match_id) if match_id else None

    def match_doc(m: Match) -> dict:
        if m.id in withheld:
            return _withheld_match_doc(match_doc_shown(m))
        return match_doc_shown(m)

    def match_doc_shown(m: Match) -> dict:
        res = results.get(m.id, {})
        order = [x for x in (m.home_id, m.away_id) if x]
        return {
            "ref": match_ref[m.id],
            "group": m.group.name if m.group else None,
            "table": m.table_number,
            "home": lref(m.home_id),
            "away": lref(m.away_id),
            "status": m.status,
            "outcome": m.outcome or None,
            "winner": lref(m.winner_id),
            "offender": lref(m.offender_id),
            "bracket_position": m.bracket_position,
            "next_match": mref(m.next_match_id),
            "next_slot": m.next_slot or None,
            "loser_next_match": mref(m.loser_next_match_id),
            "loser_next_slot": m.loser_next_slot or None,
            "is_third_place": m.is_third_place,
            "deals": [
                {
                    "number": d.number,
                    "line": lref(line_id),
                    "points": d.points[side],
                    "breakdown": _sorted(d.breakdown[side]),
                    "is_tiebreak": d.is_tiebreak,
                    "is_penalty": d.is_penalty,
                }
                for d in deals.get(m.id, [])
                for side, line_id in enumerate((m.home_id, m.away_id))
            ],
            "results": [
                {
                    "line": lref(lid),
                    "points": res[lid].points,
                    "mp": res[lid].mp,
                    "vp": res[lid].vp,
                    "won": res[lid].won,
                    "drawn": res[lid].drawn,
                }
                for lid in order
                if lid in res
            ],
            "penalties": [
                {
                    "line": lref(p.line_id),
                    "kind": p.kind,
                    "label": p.label,
                    "vp": p.vp,
                    "reason": p.reason,
                }
                for p in penalties.get(m.id, [])
            ],
            # a duplicate match's boards ruled by the director (absent elsewhere)
            **(
                {
                    "board_rulings": [
                        {
                            "board": a.board,
                            "kind": a.kind,
                            "fault": a.fault,
                            # which misprepared deck the table held (that kind only)
                            **({"deck": a.deck} if a.kind == "other_deck" else {}),
                        }
                        for a in rulings[m.id]
                    ]
                }
                if rulings.get(m.id)
                else {}
            ),
        }

    stage_docs = []
    final = []
    for stage in stages:
        stage_groups = [g for g in groups if g.stage_id == stage.id]
        standings = _stage_standings(stage, stage.id in secret_stages)
        stage_docs.append(
            {
                **(_pairing_doc(stage) if stage.is_paired_by_round else {}),
                **_duplicate_doc(stage, lref, full),
                "order": stage.order,
                "name": stage.name,
                "kind": stage.kind,
                "status": stage.status,
                "double_round_robin": stage.double_round_robin,
                "third_place_match": stage.third_place_match,
                "groups": [
                    {
                        "name": g.name,
                        "order": g.order,
                        "members": [
                            {
                                "line": lref(x.line_id),
                                "position": x.position,
                                **({"joined_round": x.joined_round} if x.joined_round != 1 else {}),
                            }
                            for x in sorted(
                                (x for x in gm if x.group_id == g.id), key=lambda x: x.position
                            )
                        ],
                        "standings": [
                            _standing_doc(row, lref) for row in standings.get(g.name, [])
                        ],
                    }
                    for g in stage_groups
                ],
                "rounds": [
                    {
                        "number": r.number,
                        "name": r.name,
                        "starts_at": _datetime(r.starts_at),
                        "matches": [match_doc(m) for m in matches if m.round_id == r.id],
                    }
                    for r in rounds
                    if r.stage_id == stage.id
                ],
            }
        )
    if stages:
        last = stages[-1]
        if last.kind == Stage.Kind.KNOCKOUT:
            final = _knockout_final([m for m in matches if m.round.stage_id == last.id], lref)
            if final and len(stages) > 1 and stages[-2].is_paired_by_round:
                final += _places_before_the_knockout(stages[-2], final, lref)
        else:
            final = [
                {"group": name, **_standing_doc(row, lref)}
                for name, rows in _stage_standings(last, last.id in secret_stages).items()
                for row in rows
            ]

    return {
        "format": FORMAT,
        "tournament": {
            "slug": t.slug,
            "name": t.name,
            "start_date": _date(t.start_date),
            "end_date": _date(t.end_date),
            "venue": t.venue,
            "status": t.status,
            "is_public": t.is_public,
            "variant": t.variant,
            "options": _sorted(t.options or {}),
            "deck_style": t.deck_style,
            "seats_per_line": t.seats_per_line,
            "end_rule": t.end_rule,
            "end_value": t.end_value,
            "time_limit_s": t.time_limit_s,
            "tiebreaks": list(t.tiebreaks or []),
            "lots_seed": t.lots_seed,
            "vp_table": _vp_table(t.vp_table),
        },
        "players": [
            {
                "ref": player_ref[p.id],
                "name": p.name,
                "federation_id": p.federation_id or None,
                "club": p.club,
                "city": p.city,
            }
            for p in ordered_players
        ],
        "lines": [
            {
                "ref": line_ref[lid],
                "name": line_names.get(lid, ""),
                "club": line_clubs.get(lid, ""),
                "players": [
                    player_ref[m.player_id] for m in sorted(members[lid], key=lambda m: m.position)
                ],
                "entered": lid in entry_of,
                "seed": entry_of[lid].seed if lid in entry_of else None,
                "withdrawn": entry_of[lid].withdrawn if lid in entry_of else False,
                "checked_in": entry_of[lid].checked_in if lid in entry_of else False,
                "category": entry_of[lid].category if lid in entry_of else "",
            }
            for lid in line_ids
        ],
        "stages": stage_docs,
        "final_standings": final,
        "prizes": _prizes_doc(t, final, entry_of, line_ref),
        "forbidden_pairings": _forbidden_doc(t, line_ref),
        "penalty_table": [
            {"label": rule.label, "kind": rule.kind, "vp": rule.vp}
            for rule in PenaltyRule.objects.filter(tournament=t).order_by("id")
        ],
    }


def _forbidden_doc(t: Tournament, line_ref: dict) -> list[dict]:
    """The pairings the organizer forbids, each as two line refs in the file's order."""

    def number(line_id: int) -> int:
        return int(line_ref[line_id][1:])

    # the organizer's notes ("husband and wife") stay on the desk: the export is public
    pairs = [
        sorted((a, b), key=number)
        for a, b in ForbiddenPairing.objects.filter(tournament=t).values_list(
            "line_a_id", "line_b_id"
        )
        if a in line_ref and b in line_ref
    ]
    pairs.sort(key=lambda pair: [number(line) for line in pair])
    return [{"lines": [line_ref[a], line_ref[b]]} for a, b in pairs]


def _prizes_doc(t: Tournament, final: list[dict], entry_of: dict, line_ref: dict) -> list[dict]:
    """The prize list in handing order, each with the line it goes to (``None`` until the final
    standings have a line for it). Withdrawn lines take no prize. The export owns this so that
    the podium pages and the file cannot disagree."""
    ref_to_line = {ref: lid for lid, ref in line_ref.items()}
    ranked = []
    # several final groups: every group's first places before any second place
    for place in sorted(final, key=lambda place: place["rank"]):
        lid = ref_to_line.get(place["line"])
        entry = entry_of.get(lid)
        if lid is None or entry is None or entry.withdrawn:
            continue
        ranked.append(RankedLine(line=lid, rank=place["rank"], category=entry.category))
    prizes = {p.pk: p for p in Prize.objects.filter(tournament=t)}
    specs = [
        PrizeSpec(key=p.pk, value=p.value, place=p.place, category=p.category)
        for p in prizes.values()
    ]
    allocation = allocate(specs, ranked)
    return [
        {
            "place": prizes[spec.key].place,
            "category": spec.category,
            "value": spec.value,
            "label": prizes[spec.key].label,
            "line": line_ref.get(allocation[spec.key]) if allocation[spec.key] else None,
        }
        for spec in handing_order(specs)
    ]


def _duplicate_doc(stage, lref, full: bool) -> dict:
    """A duplicate stage's boards and movement (secrets left out of the public export), absent
    for the other kinds."""
    if stage.kind != Stage.Kind.DUPLICATE:
        return {}
    board_set = BoardSet.objects.filter(stage=stage).first()
    return {"duplicate": duplicate.export_doc(board_set, lref, full=full)} if board_set else {}


def _withheld_match_doc(doc: dict) -> dict:
    """A table of a running duplicate stage that holds a board still secret, in the public
    export: as not played yet (its deals, points and winner would tell the tables still to play
    the board how it goes)."""
    shown = {key: value for key, value in doc.items() if key != "board_rulings"}
    return shown | {
        "status": Match.Status.SCHEDULED,
        "outcome": None,
        "winner": None,
        "offender": None,
        "deals": [],
        "results": [],
    }


def _stage_standings(stage, withheld: bool) -> dict[str, list]:
    """The standings a stage's document carries: none for a knock-out; none in the public
    export of a duplicate stage while some of its boards are secret (`withheld`: their match
    totals count the tables still secret; the ranking on the open boards is on the stage's
    page)."""
    if withheld or not (
        stage.kind in (Stage.Kind.ROUND_ROBIN, Stage.Kind.DUPLICATE) or stage.is_paired_by_round
    ):
        return {}
    return _standings(stage)


def _pairing_doc(stage) -> dict:
    """The settings of a Danish, Swiss or Mitchell stage (absent for the other kinds); places
    kept for categories only when the stage keeps some, so older documents read the same."""
    kept = {"category_places": dict(stage.category_places)} if stage.category_places else {}
    return {
        "pairing": {
            "rounds_planned": stage.rounds_planned,
            "first_round": stage.first_round,
            "draw_seed": stage.draw_seed,
            "bye_scoring": stage.bye_scoring,
            "bye_vp": stage.bye_vp,
            "arrow_switch": stage.arrow_switch,
            "keep_clubs_apart": stage.keep_clubs_apart,
            "late_entry_until_round": stage.late_entry_until_round,
            "carry_over": stage.carry_over,
            "advance_count": stage.advance_count,
            "tiebreaks": list(stage.stage_tiebreaks or []),
            **kept,
        }
    }


def _standings(stage) -> dict[str, list]:
    from tournaments.services.standings import stage_standings

    return {group.name: rows for group, rows in stage_standings(stage)}


def _standing_doc(row, lref) -> dict:
    return {
        "rank": row.rank,
        "line": lref(row.line.pk),
        **standings_columns.totals_of(row),
        "shared_rank": row.shared_rank,
    }


def _knockout_final(matches: list[Match], lref) -> list[dict]:
    """Places from a bracket: 1 and 2 from the final, 3 and 4 from the third-place match (or a
    shared 3rd), then the losers of each earlier round sharing the next places. Empty until the
    final has a result."""
    regular = [m for m in matches if not m.is_third_place]
    if not regular:
        return []
    last_round = max(m.round.number for m in regular)
    finals = [m for m in regular if m.round.number == last_round]
    if len(finals) != 1 or finals[0].status != Match.Status.DONE or not finals[0].winner_id:
        return []
    done = [m for m in matches if m.status == Match.Status.DONE and m.winner_id]
    by_round = defaultdict(list)
    for m in done:
        if not m.is_third_place:
            by_round[m.round.number].append(m)
    rounds = sorted(by_round, reverse=True)
    final = by_round[rounds[0]] if rounds else []
    places = []
    taken = set()

    def add(rank, line_id):
        if line_id and line_id not in taken:
            taken.add(line_id)
            places.append({"rank": rank, "line": lref(line_id)})

    if len(final) == 1:
        f = final[0]
        loser = f.away_id if f.winner_id == f.home_id else f.home_id
        add(1, f.winner_id)
        add(2, loser)
    next_rank = 3
    third = [m for m in done if m.is_third_place]
    if third:
        m = third[0]
        add(3, m.winner_id)
        add(4, m.away_id if m.winner_id == m.home_id else m.home_id)
        next_rank = 5
    for number in rounds[1:]:
        losers = sorted(
            (
                m.away_id if m.winner_id == m.home_id else m.home_id
                for m in by_round[number]
                if m.outcome != Outcome.BYE
            ),
            key=lambda x: lref(x) or "",
        )
        losers = [x for x in losers if x and x not in taken]
        for x in losers:
            add(next_rank, x)
        next_rank += len(losers) if losers else 0
    return places


def _places_before_the_knockout(stage: Stage, bracket: list[dict], lref) -> list[dict]:
    """The lines a Mitchell, Danish or Swiss stage did not send on to the knock-out, placed
    after the bracket's lines in the order of the ranking that qualified them (the combined
    ranking, ``pairing.open_standings``), lines level there sharing a place. Without them a
    category prize could only go to a line of the bracket."""
    taken = {place["line"] for place in bracket}
    places: list[dict] = []
    previous_rank, shown = None, 0
    for row in pairing.open_standings(stage):
        ref = lref(row.line_id)
        if ref is None or ref in taken:
            continue
        position = len(bracket) + len(places) + 1
        if row.rank != previous_rank:
            shown = position
        previous_rank = row.rank
        places.append({"rank": shown, "line": ref})
    return places


def dumps(doc: dict) -> bytes:
    """Canonical bytes: UTF-8, two-space indent, keys in format order, final newline."""
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode()


# --- cheap conditional GET ------------------------------------------------------------------


def stamp(tournament: Tournament) -> tuple[str, dt.datetime]:
    """A fingerprint of everything the export shows that moves with any change, and the time
    of the newest change (for Last-Modified); two small aggregate queries."""
    agg = Match.objects.filter(round__stage__tournament=tournament).aggregate(
        last=Max("updated_at"), n=Count("id")
    )
    res = MatchResult.objects.filter(match__round__stage__tournament=tournament).aggregate(
        n=Count("id"), id=Max("id")
    )
    # the versions in force keep the deals; a change of them also rewrites the score rows and
    # the match row above (an older version accepted again comes with both), so the stamp moves
    deal = ResultVersion.objects.filter(
        match__round__stage__tournament=tournament, status=ResultVersion.Status.IN_FORCE
    ).aggregate(n=Count("id"), id=Max("id"))
    log = ChangeLog.objects.filter(tournament=tournament).aggregate(
        last=Max("created_at"), id=Max("id")
    )
    times = [x for x in (tournament.updated_at, agg["last"], log["last"]) if x]
    raw = repr((FORMAT, tournament.pk, tournament.updated_at, agg, res, deal, log["id"]))
    return hashlib.sha1(raw.encode()).hexdigest(), max(times)


@dataclass(frozen=True)
class Rendered:
    body: bytes
    etag: str
    last_modified: dt.datetime


def rendered(tournament: Tournament, kind: str = "json", *, full: bool = False) -> Rendered:
    """The export (``json``, ``standings.csv`` or ``results.csv``; the organizer's ``full`` one
    or the public one) with its ETag, from the cache while the tournament's stamp has not
    moved."""
    fingerprint, last_modified = stamp(tournament)
    key = f"ratings:export:{tournament.pk}:{kind}:{'full' if full else 'public'}:{fingerprint}"
    hit = cache.get(key)
    if hit is not None:
        return hit
    doc = build_document(tournament, full=full)
    if kind == "json":
        body = dumps(doc)
    elif kind == "standings.csv":
        body = standings_csv(doc)
    elif kind == "results.csv":
        body = results_csv(doc)
    else:
        raise ValueError(kind)
    out = Rendered(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"', last_modified)
    cache.set(key, out, CACHE_TTL)
    return out


# --- CSV --------------------------------------------------------------------------------------


def _csv(rows: list[list]) -> bytes:
    return write_csv(rows)


def _line_labels(doc):
    players = {p["ref"]: p for p in doc["players"]}
    labels = {}
    for line in doc["lines"]:
        fids = [players[r]["federation_id"] or "" for r in line["players"]]
        labels[line["ref"]] = (line["name"], ";".join(fids))
    return labels


def standings_csv(doc: dict) -> bytes:
    labels = _line_labels(doc)
    rows = [
        [
            "stage",
            "group",
            "rank",
            "line",
            "federation_ids",
            *standings_columns.KEYS,
        ]
    ]
    for stage in doc["stages"]:
        for group in stage["groups"]:
            for s in group["standings"]:
                name, fids = labels[s["line"]]
                totals = [s[key] for key in standings_columns.KEYS]
                rows.append([stage["name"], group["name"], s["rank"], name, fids, *totals])
    # the bracket's places carry the last stage's own name (as the organizer wrote it)
    last_stage = doc["stages"][-1]["name"] if doc["stages"] else ""
    for place in doc["final_standings"]:
        if "group" not in place:
            name, fids = labels[place["line"]]
            blanks = [""] * len(standings_columns.KEYS)
            rows.append([last_stage, "", place["rank"], name, fids, *blanks])
    return _csv(rows)


def results_csv(doc: dict) -> bytes:
    labels = _line_labels(doc)
    rows = [
        [
            "tournament",
            "date",
            "stage",
            "round",
            "group",
            "table",
            "home",
            "home_federation_ids",
            "away",
            "away_federation_ids",
            "home_points",
            "away_points",
            "home_mp",
            "away_mp",
            "home_vp",
            "away_vp",
            "outcome",
            "winner",
            "offender",
        ]
    ]
    t = doc["tournament"]
    for stage in doc["stages"]:
        for rnd in stage["rounds"]:
            for m in rnd["matches"]:
                if m["status"] != Match.Status.DONE or not m["home"] or not m["away"]:
                    continue
                res = {r["line"]: r for r in m["results"]}
                h, a = res.get(m["home"], {}), res.get(m["away"], {})
                rows.append(
                    [t["slug"], t["start_date"], stage["name"], rnd["number"], m["group"] or "",
                     m["table"] or "", labels[m["home"]][0], labels[m["home"]][1],
                     labels[m["away"]][0], labels[m["away"]][1], h.get("points", ""),
                     a.get("points", ""), h.get("mp", ""), a.get("mp", ""), h.get("vp", ""),
                     a.get("vp", ""), m["outcome"] or "",
                     labels[m["winner"]][0] if m["winner"] else "",
                     labels[m["offender"]][0] if m["offender"] else ""]
                )  # fmt: skip
    return _csv(rows)


def range_document(tournaments) -> dict:
    return {
        "format": RANGE_FORMAT,
        "tournaments": [build_document(t) for t in tournaments],
    }


def now():
    return timezone.now()
