"""What the fan-out bench's own servers share (``bench/fanout_floor.py``, ``bench/fanout_sse.py``):
their command line, and the public group a page's path names, as the push names it
(``live.groups.group_name``)."""

import argparse
from urllib.parse import parse_qs

from live.groups import group_name


def arguments(description: str) -> tuple[argparse.Namespace, dict[str, int]]:
    """The options ``bench/fanout.py`` starts a server with, and its tournaments by slug."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True, help="the channel layer's Redis URL")
    parser.add_argument("--prefix", required=True, help="the channel layer's prefix")
    parser.add_argument("--tournament", action="append", default=[], help="SLUG=ID")
    parser.add_argument("--language", default="it", help="without ?lang=")
    args = parser.parse_args()
    tournaments = {}
    for item in args.tournament:
        slug, _equals, number = item.partition("=")
        tournaments[slug] = int(number)
    return args, tournaments


def public_group(
    path: str, query: str, kind: str, tournaments: dict[str, int], default: str
) -> str | None:
    """The public group of ``/<kind>/t/<slug>/?lang=`` (``ws`` or ``sse``), or None for a path
    that names no tournament of the server's."""
    parts = path.strip("/").split("/")
    if len(parts) != 3 or parts[:2] != [kind, "t"] or parts[2] not in tournaments:
        return None
    language = (parse_qs(query).get("lang") or [default])[0]
    return group_name(tournaments[parts[2]], language)
