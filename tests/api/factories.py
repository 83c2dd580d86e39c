"""Builders shared by the API and pipeline tests: a tournament, its lines, matches, records."""

import datetime
import itertools

from django.contrib.auth import get_user_model

from scopa import simulate_match
from tournaments.models import (
    Entry,
    Group,
    GroupMember,
    Line,
    LineMember,
    Match,
    Player,
    Role,
    Round,
    Stage,
    Tournament,
    TournamentRole,
    VPTable,
    VPTableRow,
)

_counter = itertools.count(1)


def vp_table():
    table, created = VPTable.objects.get_or_create(
        slug="test-api-11", defaults={"name": "11 points (tests)", "target_points": 11}
    )
    if created:
        rows = [
            VPTableRow(table=table, vp_winner=10 + i, vp_loser=10 - i, mp_from=i, mp_to=i)
            for i in range(10)
        ]
        rows.append(VPTableRow(table=table, vp_winner=20, vp_loser=0, mp_from=10, mp_to=None))
        VPTableRow.objects.bulk_create(rows)
    return table


def user(name=None, **extra):
    name = name or f"user{next(_counter)}"
    return get_user_model().objects.create_user(username=name, password="pw-" + name, **extra)


def tournament(
    *,
    lines=2,
    public=True,
    organizer=None,
    referee=None,
    scorer=None,
    viewer=None,
    knockout=False,
    **fields,
):
    """A tournament with one group of ``lines`` lines (one player each, with a user) and one
    round-robin round of every pair, as plain rows (no scheduler needed); the given users get
    their role in it."""
    n = next(_counter)
    t = Tournament.objects.create(
        slug=f"t{n}",
        name=f"Torneo {n}",
        start_date=datetime.date(2026, 11, 22),
        is_public=public,
        vp_table=vp_table(),
        **fields,
    )
    for role, holder in (
        (Role.ORGANIZER, organizer),
        (Role.REFEREE, referee),
        (Role.SCORER, scorer),
        (Role.VIEWER, viewer),
    ):
        if holder:
            TournamentRole.objects.create(tournament=t, user=holder, role=role)
    stage = Stage.objects.create(
        tournament=t,
        order=1,
        name="Gironi" if not knockout else "Eliminazione",
        kind=Stage.Kind.KNOCKOUT if knockout else Stage.Kind.ROUND_ROBIN,
    )
    group = None if knockout else Group.objects.create(stage=stage, name="A")
    made = []
    for i in range(lines):
        line = Line.objects.create(name=f"L{n}-{i}")
        for seat in range(t.seats_per_line):
            player = Player.objects.create(name=f"P{n}-{i}-{seat}", user=user(f"p{n}_{i}_{seat}"))
            LineMember.objects.create(line=line, player=player, position=seat)
        Entry.objects.create(tournament=t, line=line, seed=i + 1)
        if group:
            GroupMember.objects.create(group=group, line=line, position=i + 1)
        made.append(line)
    rnd = Round.objects.create(stage=stage, number=1)
    for table, (a, b) in enumerate(itertools.combinations(made, 2), start=1):
        Match.objects.create(round=rnd, group=group, home=a, away=b, table_number=table)
    return t


def matches(t):
    return list(Match.objects.filter(round__stage__tournament=t).order_by("id"))


def players_user(line):
    return line.members.first().player.user


def record(t=None, *, seed=1, seats=None, **overrides):
    """A legal simulated record fitting tournament ``t``."""
    variant = t.variant if t else "scopa"
    doc = simulate_match(
        variant=variant,
        seats=seats or (t.seats if t else 2),
        options=(t.options or None) if t else None,
        end=t.match_end() if t else {"target": 11},
        knockout=bool(t and t.stages.first().is_knockout),
        seed=seed,
    )
    doc.update(overrides)
    return doc
