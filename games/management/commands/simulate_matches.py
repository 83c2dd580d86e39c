"""`manage.py simulate_matches`: write random legal match records, one JSON file per match."""

import json
from pathlib import Path

import msgspec
from django.core.management.base import BaseCommand, CommandError

from scopa import POLICIES, VARIANTS, simulate_match
from scopa.record import OptionsInput


def _option(text: str) -> tuple[str, object]:
    name, _, value = text.partition("=")
    lowered = value.lower()
    if lowered in ("true", "on", "yes", "1"):
        return name, True
    if lowered in ("false", "off", "no", "0"):
        return name, False
    return name, value


class Command(BaseCommand):
    help = "Simulate legal scopa-match/1 records from a seed (deterministic)."

    def add_arguments(self, parser):
        parser.add_argument("--variant", choices=VARIANTS, default="scopa")
        parser.add_argument("--seats", type=int, choices=(2, 3, 4, 6), default=2)
        parser.add_argument("--count", type=int, default=1)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--out", required=True, help="directory for the JSON files")
        parser.add_argument("--policy", choices=POLICIES, default="random")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--target", type=int)
        group.add_argument("--deals", type=int)
        parser.add_argument("--knockout", action="store_true")
        parser.add_argument(
            "--option", action="append", default=[], metavar="NAME=VALUE", help="rule option"
        )

    def handle(self, *args, **opts):
        options = dict(_option(text) for text in opts["option"])
        try:
            msgspec.convert(options, OptionsInput)
        except msgspec.ValidationError as exc:
            raise CommandError(f"bad --option: {exc}") from None
        end = None
        if opts["target"] is not None:
            end = {"target": opts["target"]}
        elif opts["deals"] is not None:
            end = {"deals": opts["deals"]}
        out = Path(opts["out"])
        out.mkdir(parents=True, exist_ok=True)
        for index in range(opts["count"]):
            record = simulate_match(
                variant=opts["variant"],
                seats=opts["seats"],
                options=options,
                end=end,
                knockout=opts["knockout"],
                seed=f"{opts['seed']}:{index}",
                policy=opts["policy"],
            )
            path = out / f"match-{opts['seed']}-{index:05d}.json"
            path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        self.stdout.write(f"{opts['count']} records written to {out}")
