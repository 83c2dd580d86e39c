"""The role matrix: every URL pattern of the URLconf and every operation of the OpenAPI schema,
asked by every kind of user, against the ONE expectation table ``EXPECTED``.

Each pattern is resolved with real objects of the public tournament A and of the private
tournament B (``tests.access.world``); every request runs in a transaction that is rolled back,
so a POST that succeeds changes nothing for the next one. A pattern or operation without a row
fails the test with the exact line to add. A 200 answer to anyone who may not see B must not
carry B's names.
"""

import re
from http.cookies import SimpleCookie

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from tests.access.expected import EXPECTED
from tests.access.world import ACTORS, SECRET, SEES_B, build_world
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

METHODS = ("GET", "POST")
ADMIN_POSTS = {
    # admin forms that change tournament data: their POST is part of the matrix too
    "admin:tournaments_match_change",
    "admin:tournaments_stage_change",
    "admin:tournaments_tournament_change",
    "admin:tournaments_match_delete",
    "admin:tournaments_tournament_delete",
}
SCOPED_ADMIN_MODELS = {
    "tournaments.tournament",
    "tournaments.stage",
    "tournaments.group",
    "tournaments.round",
    "tournaments.match",
    "tournaments.line",
    "tournaments.player",
    "tournaments.entry",
    "tournaments.changelog",
    "games.submission",
}
API_BASENAMES = {
    "tournament",
    "stage",
    "group",
    "round",
    "match",
    "line",
    "player",
    "submission",
}


def _pattern_args(pattern):
    p = pattern.pattern
    if hasattr(p, "converters") and p.converters:
        return list(p.converters)
    return list(p.regex.groupindex)


def walk(resolver=None, namespace=None, inherited=(), route=""):
    """``(name, kwarg names)`` of every pattern; a pattern without a name is named by its
    route (``/admin/tournaments/match/<path:object_id>/``). The format-suffix twins of the API's
    routes (the same view with ``.json`` appended) are left out."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        args = (*inherited, *_pattern_args(entry))
        here = route + str(entry.pattern).lstrip("^").rstrip("$")
        if isinstance(entry, URLResolver):
            ns = ":".join(part for part in (namespace, entry.namespace) if part) or None
            yield from walk(entry, ns, args, here)
        elif isinstance(entry, URLPattern):
            if "format" in args:
                continue
            if entry.name:
                yield (f"{namespace}:{entry.name}" if namespace else entry.name), tuple(args)
            else:
                yield "/" + here, tuple(args)


def _admin_model(name):
    """``admin:tournaments_match_change`` or ``/admin/tournaments/match/…`` →
    ``tournaments.match``."""
    match = re.match(r"admin:([a-z]+)_([a-z]+)_[a-z_]+$", name) or re.match(
        r"/admin/([a-z]+)/([a-z]+)/", name
    )
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _is_admin(name):
    return name.startswith(("admin:", "/admin/"))


def url_for(name, kwargs):
    if not name.startswith("/"):
        return reverse(name, kwargs=kwargs)
    return re.sub(
        r"\(\?P<(\w+)>[^)]*\)|<(?:\w+:)?(\w+)>", lambda m: str(kwargs[m[1] or m[2]]), name
    )


def is_targeted(name, args):
    """Whether the pattern points into one tournament (so it is asked for A and for B)."""
    if _is_admin(name):
        if "content_type_id" in args:
            return True
        if "object_id" in args:
            return _admin_model(name) in SCOPED_ADMIN_MODELS
        return "pk" in args
    return bool(set(args) - {"app_label", "url", "id"})


def kwargs_for(name, args, side, shared):
    values = {}
    for arg in args:
        if arg == "slug":
            values[arg] = side.tournament.slug
        elif arg in ("stage_id", "group_id", "round_id", "match_id", "player_id", "line_id"):
            values[arg] = getattr(side, arg[: -len("_id")]).pk
        elif arg in ("number", "board"):
            values[arg] = 1  # a board of a duplicate stage (the world's stages have none: 404)
        elif arg == "role_id":
            values[arg] = side.role.pk
        elif arg == "token":
            # a live private link of the match's home line: the token is the credential, the
            # same answer for every actor
            from scoresheets.services.links import link_for

            values[arg] = link_for(side.tournament, side.match.home).token
        elif arg == "invite_token":
            # an invitation's token is the credential: the same answer for every actor
            values[arg] = side.invite_token
        elif arg in (
            "endpoint_id",
            "delivery_id",
            "invitation_id",
            "prize_id",
            "rule_id",
            "penalty_id",
            "pairing_id",
        ):
            values[arg] = getattr(side, arg[: -len("_id")]).pk
        elif arg == "pk" and _is_admin(name):
            obj = side.match if "enter_result" in name else side.tournament
            values[arg] = obj.pk
        elif arg == "pk":
            values[arg] = getattr(side, name.split("-")[0]).pk
        elif arg == "object_id" and "content_type_id" in args:
            values[arg] = side.tournament.pk
        elif arg == "object_id":
            model = _admin_model(name)
            key = (model or "").split(".")[-1]
            obj = side.by_model.get(key) if side else shared.get(key)
            values[arg] = obj.pk if obj is not None else 0
        elif arg == "id":
            values[arg] = shared["user"].pk
        elif arg == "content_type_id":
            values[arg] = ContentType.objects.get_for_model(Tournament).pk
        elif arg == "app_label":
            values[arg] = "tournaments"
        elif arg == "url":
            values[arg] = "nowhere/"
        else:
            raise AssertionError(f"tests/access: no value for URL argument {arg!r} of {name}")
    return values


def schema_operations():
    """``(route name, METHOD)`` of every operation of the OpenAPI schema."""
    from games.api.schema import RecordSchemaGenerator

    schema = RecordSchemaGenerator().get_schema(request=None, public=True)
    operations = set()
    for path, item in schema["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        match = resolve(concrete)
        name = f"{match.namespace}:{match.url_name}" if match.namespace else match.url_name
        for method in item:
            if method.upper() in ("GET", "POST", "PUT", "PATCH", "DELETE"):
                operations.add((name, method.upper()))
    return operations


def cases():
    """Every ``(name, args, METHOD, target)`` the matrix asks."""
    found = {}
    for name, args in walk():
        methods = METHODS if not _is_admin(name) or name in ADMIN_POSTS else ("GET",)
        for method in methods:
            found[(name, method)] = args
    args_by_name = {name: args for (name, _m), args in found.items()}
    for name, method in schema_operations():
        found.setdefault((name, method), args_by_name[name])
    for (name, method), args in sorted(found.items()):
        for target in ("A", "B") if is_targeted(name, args) else ("-",):
            yield name, args, method, target


_CASES: list[tuple] = []


def _all_cases():
    """``cases()`` once a process: it walks the URLconf and builds the OpenAPI schema."""
    if not _CASES:
        _CASES.extend(cases())
    return _CASES


def _parse(row):
    statuses = row.split()
    assert len(statuses) == len(ACTORS), f"a row of EXPECTED needs {len(ACTORS)} statuses: {row}"
    return dict(zip(ACTORS, (int(s) for s in statuses), strict=True))


def _ask(client, method, url):
    cookies = SimpleCookie()
    cookies.load(client.cookies.output(header="", sep=";"))
    with transaction.atomic():
        response = client.generic(method, url)
        transaction.set_rollback(True)
    client.cookies = cookies  # a logout in a rolled-back request must not log the actor out
    return response


@pytest.fixture
def no_throttles(settings):
    """The matrix asks thousands of times from one address: no rate limit applies here."""
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_CLASSES"] = []
    settings.REST_FRAMEWORK = rest
    settings.AXES_ENABLED = False


# The matrix asks some 5,000 requests: in shards, which pytest-xdist spreads over its workers
# (one test would hold one worker for minutes while the other idles at the suite's end).
SHARDS = 6


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_view_answers_every_actor_as_the_table_says(no_throttles, shard):
    users, sides, shared = build_world()
    clients = {}
    for actor in ACTORS:
        client = Client(raise_request_exception=False)
        if actor != "anon":
            client.force_login(users[actor])
        clients[actor] = client
    cache.clear()
    missing, wrong, leaks = [], [], []
    asked = _all_cases()[shard::SHARDS]
    for name, args, method, target in asked:
        side = sides.get(target)
        url = url_for(name, kwargs_for(name, args, side, shared))
        observed = {}
        for actor in ACTORS:
            response = _ask(clients[actor], method, url)
            observed[actor] = response.status_code
            body = b"" if response.streaming else response.content
            # a private link's token is B's own line's credential: whoever holds it plays in B
            sees_b = actor in SEES_B or any("token" in arg for arg in args)
            if response.status_code == 200 and not sees_b and SECRET.encode() in body:
                leaks.append(f"{method} {url} as {actor} shows tournament B")
        key = (name, method, target)
        line = f'    {key!r}: "{" ".join(str(observed[a]) for a in ACTORS)}",'
        if key not in EXPECTED:
            missing.append(line)
        elif _parse(EXPECTED[key]) != observed:
            expected = _parse(EXPECTED[key])
            diff = ", ".join(
                f"{a} expected {expected[a]} got {observed[a]}"
                for a in ACTORS
                if expected[a] != observed[a]
            )
            wrong.append(f"{method} {url} ({name}, {target}): {diff}")
    problems = []
    if missing:
        problems.append(
            "New view without a rule. Decide who may use it, then add to EXPECTED in "
            "tests/access/expected.py (columns: "
            + " ".join(ACTORS)
            + "); observed now:\n"
            + "\n".join(missing)
        )
    if wrong:
        problems.append("Answers that differ from EXPECTED:\n" + "\n".join(wrong))
    if leaks:
        problems.append("Private tournament B leaked:\n" + "\n".join(leaks))
    assert not problems, "\n\n".join(problems)


def test_every_row_of_the_table_is_a_view_that_exists():
    stale = set(EXPECTED) - {(n, m, t) for n, _a, m, t in _all_cases()}
    assert not stale, "Rows of EXPECTED for views that no longer exist: " + ", ".join(
        map(str, sorted(stale))
    )


def test_the_table_has_one_status_per_actor():
    for key, row in EXPECTED.items():
        assert len(row.split()) == len(ACTORS), key
