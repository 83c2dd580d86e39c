"""Factories for the ratings tests: tournaments and results written straight to the models."""

from datetime import date

import pytest

from tournaments.models import (
    Entry,
    Line,
    LineMember,
    Match,
    MatchResult,
    Outcome,
    Player,
    Round,
    Stage,
    Tournament,
    VPTable,
)


class World:
    def __init__(self):
        self.table = VPTable.objects.filter(slug="points-11").first()
        if self.table is None:  # the data migration normally provides it
            from tournaments.services.vp import load_default_tables

            load_default_tables()
            self.table = VPTable.objects.get(slug="points-11")
        self.n = 0

    def player(self, name=None, federation_id=""):
        self.n += 1
        return Player.objects.create(name=name or f"P{self.n}", federation_id=federation_id)

    def line(self, *players, name=None):
        line = Line.objects.create(name=name or " / ".join(p.name for p in players))
        for i, p in enumerate(players):
            LineMember.objects.create(line=line, player=p, position=i)
        return line

    def tournament(self, slug, day=date(2026, 1, 10), seats=1, **kw):
        t = Tournament.objects.create(
            slug=slug, name=slug, start_date=day, seats_per_line=seats, vp_table=self.table, **kw
        )
        stage = Stage.objects.create(tournament=t, order=1, name="Gironi", kind="round_robin")
        t._stage = stage
        return t

    def round(self, t, number):
        return Round.objects.get_or_create(stage=t._stage, number=number)[0]

    def match(self, t, number, home, away):
        for line in (home, away):
            if line is None:
                continue
            Entry.objects.get_or_create(tournament=t, line=line)
        return Match.objects.create(round=self.round(t, number), home=home, away=away)

    def result(self, m, home_points, away_points, outcome=Outcome.COMPLETED, offender=None):
        """Store a result the way the services do (winner by points unless someone offended)."""
        MatchResult.objects.filter(match=m).delete()
        if offender is not None:
            winner = m.away if offender == m.home else m.home
        elif home_points != away_points:
            winner = m.home if home_points > away_points else m.away
        else:
            winner = None
        m.status = Match.Status.DONE
        m.outcome = outcome
        m.offender = offender
        m.winner = winner
        m.save()
        drawn = winner is None
        for line, pts, opp in (
            (m.home, home_points, away_points),
            (m.away, away_points, home_points),
        ):
            MatchResult.objects.create(
                match=m,
                line=line,
                points=pts,
                mp=pts - opp,
                vp=10 if drawn else (14 if line == winner else 6),
                won=line == winner,
                drawn=drawn,
            )
        return m

    def play(self, t, number, home, away, hp, ap, **kw):
        return self.result(self.match(t, number, home, away), hp, ap, **kw)


@pytest.fixture
def world(db):
    return World()


@pytest.fixture
def league(world):
    """Two singles tournaments and a pairs one, with wins, a draw and a timeout."""
    ps = [world.player() for _ in range(6)]
    lines = [world.line(p) for p in ps]
    t1 = world.tournament("winter", date(2026, 1, 10))
    t2 = world.tournament("spring", date(2026, 4, 10))
    tp = world.tournament("pairs", date(2026, 2, 1), seats=2)
    pair_lines = [world.line(ps[0], ps[1]), world.line(ps[2], ps[3]), world.line(ps[4], ps[5])]
    matches = [
        world.play(t1, 1, lines[0], lines[1], 11, 5),
        world.play(t1, 1, lines[2], lines[3], 6, 11),
        world.play(t1, 1, lines[4], lines[5], 8, 8),
        world.play(t1, 2, lines[0], lines[2], 11, 9),
        world.play(t1, 2, lines[1], lines[5], 11, 3),
        world.play(tp, 1, pair_lines[0], pair_lines[1], 11, 4),
        world.play(tp, 2, pair_lines[1], pair_lines[2], 7, 11),
        world.play(t2, 1, lines[3], lines[0], 9, 4, outcome=Outcome.TIMEOUT, offender=lines[3]),
        world.play(t2, 1, lines[4], lines[2], 11, 2),
    ]
    return {
        "players": ps,
        "lines": lines,
        "pair_lines": pair_lines,
        "matches": matches,
        "t": (t1, t2, tp),
    }
