"""Staff status alone runs no tournament, and private tournaments do not leak (one test each),
then the rules of ``tournaments.access``.

- Every staff user used to run every tournament (desk, admin, export).
- Private tournaments used to leak through players, lines, ratings and the API's add-line by id.
"""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from ratings.models import RatedMatch
from ratings.services import ratings as rating_service
from tests.api import factories
from tests.pages.factories import build_tournament
from tournaments import access
from tournaments.access import Action
from tournaments.models import Entry, Match, MatchResult, Role, Stage, TournamentRole
from tournaments.services import roles

pytestmark = pytest.mark.django_db


def _staff(name, *, perms=True):
    user = User.objects.create_user(name, password="pw-" + name, is_staff=True)
    if perms:
        user.user_permissions.add(
            *Permission.objects.filter(content_type__app_label__in=["tournaments", "games"])
        )
    return user


@pytest.fixture
def two_tournaments():
    """A (public) run by ``org_a``; B (private) run by ``org_b``; both staff in the admin."""
    a = build_tournament(4, slug="alfa", public=True, play=False)
    b = build_tournament(4, slug="segreto", public=False, play=False)
    org_a, org_b = _staff("org_a"), _staff("org_b")
    roles.grant(a, org_a, Role.ORGANIZER)
    roles.grant(b, org_b, Role.ORGANIZER)
    return a, b, org_a, org_b


def _match(tournament):
    return (
        Match.objects.filter(round__stage__tournament=tournament, away__isnull=False)
        .order_by("id")
        .first()
    )


WIN = {"d0-home-scope": "7", "d0-home-carte": "1", "d0-home-denari": "1"}
WIN |= {"d0-home-settebello": "1", "d0-home-primiera": "1", "rows": "1", "outcome": "completed"}


# --- finding 2 --------------------------------------------------------------------------------


def test_an_organizer_of_a_cannot_read_or_run_private_b_from_the_desk(client, two_tournaments):
    a, b, org_a, _org_b = two_tournaments
    client.force_login(org_a)
    match, stage = _match(b), b.stages.get(order=1)
    for url in (
        reverse("desk:tournament", args=[b.slug]),
        reverse("desk:print", args=[b.slug, match.round_id]),
        reverse("desk:match", args=[b.slug, match.pk]),
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("desk:match", args=[b.slug, match.pk]), WIN).status_code == 404
    assert client.post(reverse("desk:close", args=[b.slug, stage.pk])).status_code == 404
    assert not MatchResult.objects.filter(match__round__stage__tournament=b).exists()
    assert Stage.objects.get(pk=stage.pk).status != Stage.Status.CLOSED
    home = client.get(reverse("desk:home")).content.decode()
    assert a.name in home and b.name not in home


def test_staff_status_alone_runs_nothing(client, two_tournaments):
    a, b, _org_a, _org_b = two_tournaments
    client.force_login(_staff("staffer"))
    assert client.get(reverse("desk:tournament", args=[a.slug])).status_code == 403
    assert client.get(reverse("desk:tournament", args=[b.slug])).status_code == 404
    assert client.get(reverse("export:tournament-json", args=[b.slug])).status_code == 404


def test_the_admin_shows_and_changes_only_the_users_tournaments(client, two_tournaments):
    a, b, org_a, _org_b = two_tournaments
    client.force_login(org_a)
    listing = client.get(reverse("admin:tournaments_match_changelist")).content.decode()
    assert b.name not in listing and a.name in listing
    match_b = _match(b)
    url = reverse("admin:tournaments_match_change", args=[match_b.pk])
    assert client.get(url).status_code == 302  # the admin's "does not exist" redirect
    change = reverse("admin:tournaments_tournament_change", args=[b.pk])
    assert client.get(change).status_code == 302  # the admin's "does not exist" redirect
    assert (
        client.get(reverse("admin:tournaments_tournament_change", args=[a.pk])).status_code == 200
    )


def test_the_export_of_a_private_tournament_is_for_its_role_holders(client, two_tournaments):
    _a, b, org_a, org_b = two_tournaments
    url = reverse("export:tournament-json", args=[b.slug])
    for user in (None, org_a, _staff("curious")):
        client.logout()
        if user:
            client.force_login(user)
        assert client.get(url).status_code == 404
    client.force_login(org_b)
    assert client.get(url).status_code == 200


# --- finding 3 --------------------------------------------------------------------------------


def test_players_lines_and_ratings_of_private_tournaments_are_404(client, two_tournaments):
    _a, b, org_a, _org_b = two_tournaments
    entry = Entry.objects.filter(tournament=b).select_related("line").first()
    player = entry.line.members.get().player
    viewer = User.objects.create_user("spettatore")
    TournamentRole.objects.create(tournament=b, user=viewer, role=Role.VIEWER)
    urls = [
        reverse("public:player", args=[player.pk]),
        reverse("public:line", args=[entry.line_id]),
        reverse("ratings:player", args=[player.pk]),
    ]
    for user in (None, org_a, _staff("curious")):
        client.logout()
        if user:
            client.force_login(user)
        for url in urls:
            response = client.get(url)
            assert response.status_code == 404, (user, url)
            assert player.name.encode() not in response.content
    client.force_login(viewer)
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_the_api_adds_only_lines_and_players_the_caller_can_see(api_client_for, two_tournaments):
    a, b, org_a, _org_b = two_tournaments
    private_line = Entry.objects.filter(tournament=b).first().line
    private_player = private_line.members.get().player
    client = api_client_for(org_a)
    url = f"/api/v1/tournaments/{a.pk}/lines/"
    refused = client.post(url, {"line": private_line.pk}, format="json")
    assert refused.status_code == 400
    refused = client.post(url, {"players": [{"id": private_player.pk}]}, format="json")
    assert refused.status_code == 400
    assert not Entry.objects.filter(tournament=a, line=private_line).exists()
    # and so the private player stays unreadable anonymously
    assert api_client_for(None).get(f"/api/v1/players/{private_player.pk}/").status_code == 404
    assert client.get(reverse("public:player", args=[private_player.pk])).status_code == 404


def test_private_matches_count_toward_ratings_only_when_the_tournament_says_so():
    public = build_tournament(4, slug="aperto", public=True)
    private = build_tournament(4, slug="chiuso", public=False)
    rating_service.recompute()
    rated = set(RatedMatch.objects.values_list("match__round__stage__tournament", flat=True))
    assert rated == {public.pk}
    private.rated_when_private = True
    private.save(update_fields=["rated_when_private"])
    rating_service.recompute()
    rated = set(RatedMatch.objects.values_list("match__round__stage__tournament", flat=True))
    assert rated == {public.pk, private.pk}


# --- the policy itself ------------------------------------------------------------------------


def test_what_each_role_may_do(two_tournaments):
    a, _b, _org_a, _org_b = two_tournaments
    holders = {}
    for role in Role:
        holders[role] = User.objects.create_user(f"r-{role}")
        roles.grant(a, holders[role], role)
    may = {role: {x for x in Action if access.can_manage(holders[role], a, x)} for role in Role}
    assert may[Role.ORGANIZER] == set(Action)
    assert may[Role.SCORER] == {Action.VIEW, Action.VIEW_DESK, Action.ENTER_RESULTS}
    assert may[Role.REFEREE] == {
        Action.VIEW,
        Action.VIEW_DESK,
        Action.DECIDE,
        Action.EXPORT_PRIVATE,
    }
    assert may[Role.VIEWER] == {Action.VIEW}
    # a link's token is a line's credential: only who enters results sees it
    see_links = {role for role in Role if access.can_see_links(holders[role], a)}
    assert see_links == {Role.ORGANIZER, Role.SCORER}
    superuser = User.objects.create_superuser("root")
    assert all(access.can_manage(superuser, a, x) for x in Action)
    staffer = _staff("s")
    assert not any(access.can_manage(staffer, a, x) for x in Action)


def test_querysets_agree_with_the_decisions(two_tournaments):
    a, b, org_a, org_b = two_tournaments
    anonymous = None
    assert set(access.visible_tournaments(anonymous)) == {a}
    assert set(access.visible_tournaments(org_b)) == {a, b}
    assert set(access.managed_tournaments(org_a, Action.RUN_STAGES)) == {a}
    assert set(access.managed_tournaments(_staff("s"), Action.VIEW_DESK)) == set()
    b_players = set(
        Entry.objects.filter(tournament=b).values_list("line__members__player", flat=True)
    )
    assert not b_players & set(access.visible_players(org_a).values_list("pk", flat=True))
    assert b_players <= set(access.visible_players(org_b).values_list("pk", flat=True))


def test_roles_are_granted_and_revoked_from_the_desk(client, two_tournaments):
    a, _b, org_a, _org_b = two_tournaments
    scorer = User.objects.create_user("segnapunti", password="pw-segnapunti")
    client.force_login(org_a)
    url = reverse("desk:roles", args=[a.slug])
    assert client.post(url, {"username": "segnapunti", "role": "scorer"}).status_code == 302
    assert access.can_manage(scorer, a, Action.ENTER_RESULTS)
    assert client.post(url, {"username": "nessuno", "role": "scorer"}).status_code == 200
    # the scorer enters results but does not close stages or grant roles
    client.force_login(scorer)
    match = _match(a)
    assert client.get(reverse("desk:match", args=[a.slug, match.pk])).status_code == 200
    stage = a.stages.get(order=1)
    assert client.post(reverse("desk:close", args=[a.slug, stage.pk])).status_code == 403
    assert client.get(url).status_code == 403
    # the last organizer stays
    client.force_login(org_a)
    own = TournamentRole.objects.get(tournament=a, user=org_a)
    client.post(reverse("desk:revoke_role", args=[a.slug, own.pk]))
    assert TournamentRole.objects.filter(pk=own.pk).exists()
    granted = TournamentRole.objects.get(tournament=a, user=scorer)
    client.post(reverse("desk:revoke_role", args=[a.slug, granted.pk]))
    assert not access.can_manage(User.objects.get(pk=scorer.pk), a, Action.ENTER_RESULTS)


def test_creating_a_tournament_needs_the_add_permission(two_tournaments):
    assert not access.can_create_tournament(_staff("s", perms=False))
    assert access.can_create_tournament(_staff("t"))
    assert not access.can_create_tournament(User.objects.create_user("u"))


@pytest.fixture
def api_client_for():
    from tests.api.conftest import client_for

    return client_for


def test_deleting_a_tournament_deletes_its_roles():
    t = factories.tournament(organizer=User.objects.create_user("o"))
    t.delete()
    assert not TournamentRole.objects.exists()


def test_a_hidden_players_federation_id_answers_like_an_unknown_one(
    api_client_for, two_tournaments
):
    """400 for a private player's federation id and 201 for an unknown one
    told anyone who may create a tournament which ids belong to hidden players."""
    a, b, org_a, _org_b = two_tournaments
    hidden = Entry.objects.filter(tournament=b).first().line.members.get().player
    hidden.federation_id = "FIGS-HIDDEN"
    hidden.save(update_fields=["federation_id"])
    client = api_client_for(org_a)
    url = f"/api/v1/tournaments/{a.pk}/lines/"

    def answer(fed):
        response = client.post(
            url, {"players": [{"name": "Nuovo", "federation_id": fed}]}, format="json"
        )
        return response.status_code, response.json()

    assert answer("FIGS-HIDDEN") == answer("FIGS-NOBODY")
    assert not Entry.objects.filter(tournament=a, line__members__player=hidden).exists()


def test_the_line_import_does_not_name_a_hidden_player(two_tournaments):
    """Beside finding 6: the CSV import told whose a guessed federation id was ("belongs to
    <name>, not to <name>") whatever the importer could see."""
    import io

    from tournaments.exceptions import LineImportError
    from tournaments.services import entries

    a, b, org_a, org_b = two_tournaments
    hidden = Entry.objects.filter(tournament=b).first().line.members.get().player
    hidden.federation_id = "FIGS-HIDDEN"
    hidden.save(update_fields=["federation_id"])
    csv = "line,player 1,federation id 1\nIndovina,Chiunque,FIGS-HIDDEN\n"
    with pytest.raises(LineImportError) as refused:
        entries.import_lines_csv(a, io.StringIO(csv), user=org_a)
    said = " ".join(message for _row, message in refused.value.errors)
    assert "FIGS-HIDDEN" in said and hidden.name not in said
    assert not Entry.objects.filter(tournament=a, line__members__player=hidden).exists()
    # who can see the player still reads whose id it is
    with pytest.raises(LineImportError) as told:
        entries.import_lines_csv(b, io.StringIO(csv), user=org_b)
    assert hidden.name in " ".join(message for _row, message in told.value.errors)
