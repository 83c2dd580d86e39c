"""Property: any entered deals are either refused with nothing stored, or stored consistently."""

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from tests.tournaments.conftest import RR, make_tournament
from tournaments.exceptions import ResultError
from tournaments.models import Match, MatchResult, ResultVersion
from tournaments.services import results, schedule

deal_points = st.tuples(st.integers(0, 7), st.integers(0, 7))
outcomes = st.sampled_from(["completed", "completed", "timeout", "abandon"])


class EnterResultProperties(TestCase):
    def setUp(self):
        tournament = make_tournament(n_lines=2, stages=[RR], name="Proprietà")
        stage = tournament.stages.get()
        schedule.create_groups(stage, 1)
        schedule.generate_round_robin(stage)
        self.match = Match.objects.get(round__stage=stage)

    @settings(max_examples=80, deadline=None)
    @given(
        pairs=st.lists(deal_points, min_size=0, max_size=6),
        outcome=outcomes,
        offender_home=st.booleans(),
        skew=st.integers(-1, 1),
    )
    def test_refused_or_consistent(self, pairs, outcome, offender_home, skew):
        match = Match.objects.get(pk=self.match.pk)
        deals = [
            {"points": [h, a], "breakdown": [{"scope": h + (skew if i == 0 else 0)}, {"scope": a}]}
            for i, (h, a) in enumerate(pairs)
        ]
        if outcome != "completed" and deals:
            deals[-1]["penalty"] = True
        offender = None
        if outcome != "completed":
            offender = match.home if offender_home else match.away
        before = (ResultVersion.objects.count(), MatchResult.objects.count())
        try:
            results.enter_result(match, deals, outcome=outcome, offender=offender)
        except ResultError:
            assert (ResultVersion.objects.count(), MatchResult.objects.count()) == before
            return
        assert skew == 0, "a breakdown that does not add up was accepted"
        rows = {r.line_id: r for r in MatchResult.objects.filter(match=match)}
        home, away = rows[match.home_id], rows[match.away_id]
        assert home.points == sum(h for h, _a in pairs) and away.points == sum(a for _h, a in pairs)
        assert home.vp + away.vp in (20, 14, 15, 16, 17, 18, 19)
        assert [d.points for d in results.deals_of_match(match)] == [tuple(p) for p in pairs]
        match.refresh_from_db()
        winner, loser = (home, away) if match.winner_id == match.home_id else (away, home)
        if outcome == "completed":
            assert home.vp + away.vp == 20
            assert winner.points >= 11 and winner.points > loser.points
            assert winner.mp == winner.points - loser.points == -loser.mp
        else:
            assert loser.vp == 0 and winner.vp >= 14
            assert (loser.line_id == match.home_id) == offender_home
