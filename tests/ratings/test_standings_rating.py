"""The RATING tie-break of group standings reads the ratings app's line strengths."""

from datetime import date

from ratings.services.ratings import recompute
from tournaments.models import Group, GroupMember
from tournaments.services.standings import group_standings


def test_rating_tiebreak_puts_the_stronger_line_first(world):
    strong, weak, rival = world.player("Forte"), world.player("Debole"), world.player("Rivale")
    l_strong, l_weak, l_rival = world.line(strong), world.line(weak), world.line(rival)
    earlier = world.tournament("inverno", day=date(2026, 1, 10))
    for number in (1, 2, 3):
        world.play(earlier, number, l_strong, l_rival, 11, 4)
        world.play(earlier, number, l_rival, l_weak, 11, 4)
    recompute(reason="test")

    later = world.tournament("primavera", day=date(2026, 3, 1), tiebreaks=["rating"])
    group = Group.objects.create(stage=later._stage, name="A")
    # The weaker line holds position 1, so entry order alone would list it first.
    GroupMember.objects.create(group=group, line=l_weak, position=1)
    GroupMember.objects.create(group=group, line=l_strong, position=2)
    match = world.match(later, 1, l_weak, l_strong)
    match.group = group
    match.save()
    world.result(match, 6, 6)  # a draw: level on VP, so the rating decides

    rows = group_standings(group)

    assert [row.line for row in rows] == [l_strong, l_weak]
    assert [row.rank for row in rows] == [1, 2]
    assert not rows[0].shared_rank
