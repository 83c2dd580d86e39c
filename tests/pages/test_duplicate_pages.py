"""A duplicate stage's public pages: the ranking against the field on the stage's page, a board's
traveller (404 while a table holding it has still to play it), a line's boards against the field
(secret boards without points or score), and a private tournament's pages hidden."""

import pytest
from django.urls import reverse

from tests.tournaments.helpers import deals
from tests.tournaments.test_duplicate_standings import _example
from tournaments.models import Match, MatchResult, ResultVersion

pytestmark = pytest.mark.django_db

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def _line(names, name):
    return next(pk for pk, n in names.items() if n == name)


def _unplay(stage, round_number, table):
    """Take the result of one table away again: its boards are secret once more."""
    match = Match.objects.get(round__stage=stage, round__number=round_number, table_number=table)
    ResultVersion.objects.filter(match=match).delete()
    MatchResult.objects.filter(match=match).delete()
    Match.objects.filter(pk=match.pk).update(status=Match.Status.SCHEDULED)
    return match


def test_the_stage_page_ranks_each_direction_and_links_the_open_boards(client):
    tournament, stage, _board_set, _names = _example()
    page = client.get(reverse("public:stage", args=[tournament.slug, stage.pk]), **EN)
    text = page.content.decode()
    assert page.status_code == 200
    assert "Ranking North-South" in text and "Ranking East-West" in text
    north_south = text[text.index("Ranking North-South") : text.index("Ranking East-West")]
    # N3 first at 67.36 %, then N1, N2, N4
    order = [north_south.index(f"Linea 00{k}") for k in (5, 1, 3, 7)]
    assert order == sorted(order) and "67.36" in north_south
    for board in range(1, 9):
        url = reverse("public:board", args=[tournament.slug, stage.pk, board])
        assert f'href="{url}"' in text


def test_a_traveller_lists_every_table_once_the_board_is_open(client):
    tournament, stage, _board_set, _names = _example()
    url = reverse("public:board", args=[tournament.slug, stage.pk, 1])
    page = client.get(url, **EN)
    assert page.status_code == 200
    text = page.content.decode()
    rows = text.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    assert len(rows) == 4  # board 1: N1-E1 3-1, N4-E3 2-2, N3-E4 4-1, N2-E2 1-2
    first = rows[0]
    assert "Linea 001" in first and "Linea 002" in first and "3–1" in first
    assert ">4<" in first.replace(".00", "")  # N1 beat two: 4 matchpoints
    # board 5: table 4's ruling shows, the others are factored (Neuberg)
    five = client.get(reverse("public:board", args=[tournament.slug, stage.pk, 5]), **EN)
    assert "adjusted" in five.content.decode() and "Neuberg" in five.content.decode()
    assert "5.67" in five.content.decode()  # N2's 17/3


def test_a_board_is_secret_until_every_table_holding_it_has_played_it(client):
    tournament, stage, _board_set, names = _example()
    _unplay(stage, 4, 2)  # N2-E2 on boards 1-2
    for board, status in ((1, 404), (2, 404), (3, 200)):
        url = reverse("public:board", args=[tournament.slug, stage.pk, board])
        assert client.get(url, **EN).status_code == status, board
    stage_page = client.get(reverse("public:stage", args=[tournament.slug, stage.pk]), **EN)
    secret = reverse("public:board", args=[tournament.slug, stage.pk, 1])
    assert f'href="{secret}"' not in stage_page.content.decode()
    # N1 played board 1 in round 1, but its score there waits for table 2 of round 4
    line_url = reverse("public:stage-line", args=[tournament.slug, stage.pk, _line(names, "N1")])
    text = client.get(line_url, **EN).content.decode()
    rows = text.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    assert len(rows) == 8
    assert "not open yet" in rows[0] and "3–1" not in rows[0]  # board 1
    assert "not open yet" not in rows[2] and "2–2" in rows[2]  # board 3, N1-E4 2-2
    assert client.get(reverse("public:board", args=[tournament.slug, stage.pk, 9])).status_code == (
        404
    )


def test_a_lines_page_shows_its_score_on_every_board(client):
    tournament, stage, _board_set, names = _example()
    url = reverse("public:stage-line", args=[tournament.slug, stage.pk, _line(names, "N3")])
    page = client.get(url, **EN)
    text = page.content.decode()
    assert page.status_code == 200
    assert "32.33 matchpoints out of 48" in text  # 97/3
    rows = text.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    # round 1 at table 3: boards 5 (2-3, factored 1/3) and 6 (3-2)
    assert "0.33/6" in rows[0] and "2–3" in rows[0]
    # a line that does not play the stage, and a private tournament: 404
    other = reverse("public:stage-line", args=[tournament.slug, stage.pk, 999999])
    assert client.get(other).status_code == 404
    tournament.is_public = False
    tournament.save()
    for name, args in (("stage-line", [_line(names, "N3")]), ("board", [1])):
        assert (
            client.get(
                reverse(f"public:{name}", args=[tournament.slug, stage.pk, *args])
            ).status_code
            == 404
        )


def test_a_table_whose_result_is_a_verified_record_links_its_replay(client):
    import scopa
    from games.models import Submission, content_hash
    from tournaments.services import duplicate, results

    tournament, stage, _board_set, _names = _example()
    match = _unplay(stage, 1, 1)  # its result comes from the record instead
    boards = duplicate.boards_of_match(match)
    document = scopa.simulate_match(
        variant="scopa", seats=2, decks=[(b.dealer, b.deck) for b in boards], seed=7
    )
    document["seats"] = [match.home.name, match.away.name]
    verdict = scopa.verify_document(document)
    submission = Submission.objects.create(
        match=match,
        version=1,
        document=document,
        content_hash=content_hash(document),
        state=Submission.State.VERIFIED,
        verdict=verdict,
    )
    results.apply_verified_result(match, verdict, submission=submission)
    text = client.get(reverse("public:board", args=[tournament.slug, stage.pk, 1]), **EN)
    rows = text.content.decode().split("<tbody>")[1].split("<tr>")[1:]
    replay = reverse("public:match", args=[tournament.slug, match.pk]) + "#replay-h"
    assert replay in rows[0]  # round 1, table 1
    assert sum(replay in row for row in rows) == 1 and "#replay-h" not in rows[1]


def test_a_match_page_hides_its_replay_while_its_boards_are_secret(client):
    import scopa
    from games.models import Submission, content_hash
    from tournaments.services import duplicate, results

    tournament, stage, _board_set, _names = _example()
    match = _unplay(stage, 1, 1)  # boards 1-2, also held by table 2 of round 4
    document = scopa.simulate_match(
        variant="scopa",
        seats=2,
        decks=[(b.dealer, b.deck) for b in duplicate.boards_of_match(match)],
        seed=3,
    )
    document["seats"] = [match.home.name, match.away.name]
    verdict = scopa.verify_document(document)
    submission = Submission.objects.create(
        match=match,
        version=1,
        document=document,
        content_hash=content_hash(document),
        state=Submission.State.VERIFIED,
        verdict=verdict,
    )
    results.apply_verified_result(match, verdict, submission=submission)
    _unplay(stage, 4, 2)
    url = reverse("public:match", args=[tournament.slug, match.pk])
    text = client.get(url, **EN).content.decode()
    assert "replay-timeline" not in text and "once every table has played" in text
    # nor its deals' points and categories (who took the settebello), on the page or the API
    assert "Points of each deal" not in text
    assert "2 deals are shown once every table has played their boards" in text
    api = client.get(f"/api/v1/matches/{match.pk}/").json()
    assert api["deals"] == []
    other = Match.objects.get(round__stage=stage, round__number=4, table_number=2)
    results.save_result(other, deals((1, 2), (3, 0)))
    text = client.get(url, **EN).content.decode()
    assert "replay-timeline" in text
    assert "Points of each deal" in text and "are shown once every table" not in text
    assert len(client.get(f"/api/v1/matches/{match.pk}/").json()["deals"]) == 4
