"""Private links: one live link per reach, re-issue revokes, a link acts only for its line."""

import pytest
from django.db import IntegrityError, transaction

from scoresheets.models import PrivateLink
from scoresheets.selectors import link_by_token, matches_of
from scoresheets.services import links
from tournaments.access import link_may_act
from tournaments.models import ChangeLog, Match


def test_link_for_is_idempotent_and_logged(running, first_match):
    line = first_match.home
    first = links.link_for(running, line)
    assert links.link_for(running, line) == first
    assert ChangeLog.objects.filter(tournament=running, action="link_issued").count() == 1
    assert len(first.token) >= 22


def test_reissue_revokes_the_old_link(running, first_match):
    old = links.link_for(running, first_match.home, first_match)
    new = links.reissue(old)
    old.refresh_from_db()
    assert old.revoked_at is not None and new.is_live and new.token != old.token
    assert link_by_token(old.token) == old  # still found, so the view can say "revoked"
    assert not matches_of(old).exists()
    assert list(matches_of(new)) == [first_match]


def test_database_allows_one_live_link_per_reach(running, first_match):
    links.link_for(running, first_match.home)
    with pytest.raises(IntegrityError), transaction.atomic():
        PrivateLink.objects.create(tournament=running, line=first_match.home)


def test_a_link_acts_only_for_its_own_line_and_match(running, first_match):
    line_link = links.link_for(running, first_match.home)
    others = Match.objects.filter(round__stage__tournament=running).exclude(pk=first_match.pk)
    own = [m for m in others if first_match.home_id in (m.home_id, m.away_id)]
    foreign = [m for m in others if first_match.home_id not in (m.home_id, m.away_id)]
    assert link_may_act(line_link, first_match)
    assert all(link_may_act(line_link, m) for m in own)
    assert not any(link_may_act(line_link, m) for m in foreign)
    match_link = links.link_for(running, first_match.home, first_match)
    assert link_may_act(match_link, first_match)
    assert not any(link_may_act(match_link, m) for m in own)
    links.revoke(match_link)
    assert not link_may_act(match_link, first_match)
    assert link_by_token("") is None and link_by_token("x" * 100) is None


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_every_token(running, first_match):
    """Migration 0003 hashes and seals each token and drops the column; back, the tokens come
    out of their seals: nothing is lost either way."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("scoresheets", "0002_indexes_led_by_a_unique_one")]
    after = [("scoresheets", "0003_tokens_kept_as_hash_and_seal")]
    made = [
        links.link_for(running, first_match.home),
        links.link_for(running, first_match.away, first_match),
    ]
    revoked = links.reissue(made[0])
    known = {link.pk: link.token for link in [*made, revoked]}

    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("scoresheets", "PrivateLink")
    assert dict(old.objects.values_list("pk", "token")) == known
    extra = old.objects.create(
        tournament_id=running.pk, line_id=first_match.away_id, token="Zq" * 11
    )
    known[extra.pk] = "Zq" * 11

    executor = MigrationExecutor(connection)
    executor.migrate(after)
    # on to the project's latest migrations (going back unapplied those depending on 0003 in
    # any app), so that today's models read the tables, here and in the next tests
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    for pk, token in known.items():
        found = link_by_token(token)
        assert found is not None and found.pk == pk
        assert PrivateLink.objects.get(pk=pk).token == token
