"""Small tournaments built through the services, for the page tests (seed_demo is bigger)."""

import datetime

from tournaments.models import Entry, Line, LineMember, Player, Stage, Tournament, VPTable
from tournaments.services import results, schedule

CLASSIC = ("carte", "denari", "settebello", "primiera")


def winning_deals(winner_side, loser_points):
    """One deal to 11: the winner takes 7 scope and the four classic points."""
    win = {"scope": 7, **dict.fromkeys(CLASSIC, 1)}
    lose = {"scope": loser_points} if loser_points else {}
    breakdown = [win, lose] if winner_side == 0 else [lose, win]
    points = [sum(b.values()) for b in breakdown]
    return [{"points": points, "breakdown": breakdown}]


def build_tournament(
    n_lines,
    *,
    slug="demo",
    public=True,
    groups=1,
    play=True,
    knockout=True,
    status=Tournament.Status.RUNNING,
):
    table = VPTable.objects.get(slug="points-11")
    tournament = Tournament.objects.create(
        slug=slug,
        name=f"Torneo {slug}",
        start_date=datetime.date(2026, 5, 9),
        venue="Circolo Scopa, Napoli",
        status=status,
        is_public=public,
        vp_table=table,
        end_rule="target",
        end_value=11,
    )
    # one statement a table, not four a line
    numbers = range(1, n_lines + 1)
    players = Player.objects.bulk_create(
        Player(name=f"Giocatore {slug} {i:02d}", city="Napoli") for i in numbers
    )
    lines = Line.objects.bulk_create(Line(name=f"Linea {slug} {i:02d}") for i in numbers)
    LineMember.objects.bulk_create(
        LineMember(line=line, player=player, position=0)
        for line, player in zip(lines, players, strict=True)
    )
    Entry.objects.bulk_create(
        Entry(tournament=tournament, line=line, seed=i) for i, line in enumerate(lines, start=1)
    )
    rr = Stage.objects.create(
        tournament=tournament, order=1, name="Gironi", kind=Stage.Kind.ROUND_ROBIN
    )
    if knockout:
        Stage.objects.create(
            tournament=tournament,
            order=2,
            name="Eliminazione diretta",
            kind=Stage.Kind.KNOCKOUT,
            third_place_match=True,
        )
    schedule.create_groups(rr, groups)
    schedule.generate_round_robin(rr)
    if play:
        play_stage(rr)
    return tournament


def play_stage(stage, *, limit=None):
    """Enter a result for every match of ``stage`` that has two lines and no result yet."""
    from tournaments.models import Match

    matches = (
        Match.objects.filter(round__stage=stage, home__isnull=False, away__isnull=False)
        .exclude(status=Match.Status.DONE)
        .order_by("round__number", "table_number", "id")
    )
    for n, match in enumerate(matches):
        if limit is not None and n >= limit:
            break
        side = (match.home_id + match.away_id + n) % 2
        results.enter_result(match, winning_deals(side, n % 9))


def add_verified_record(match, *, seed=1):
    """Simulate a legal record for ``match``, store its verdict and a standing Submission."""
    from games.models import Submission, content_hash
    from scopa import simulate_match, verify_document

    tournament = match.round.stage.tournament
    document = simulate_match(end=tournament.match_end(), seed=seed)
    document["seats"] = [match.home.name, match.away.name]
    verdict = verify_document(document)
    submission = Submission.objects.create(
        match=match,
        version=1,
        document=document,
        content_hash=content_hash(document),
        state=Submission.State.VERIFIED,
        verdict=verdict,
    )
    results.apply_verified_result(match, verdict, submission=submission)
    return submission


def reopen_stage(stage):
    """Closed stages keep their results final; tests that change one reopen the stage first."""
    from tournaments.models import Stage

    Stage.objects.filter(pk=stage.pk).update(status=Stage.Status.RUNNING)
    stage.status = Stage.Status.RUNNING
