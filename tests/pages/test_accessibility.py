"""Structural accessibility checks on every page (an axe-core audit found no violations; these
keep the basics from regressing without a browser): one main landmark and one h1, captioned
tables with scoped headers, labelled form fields, named SVG images."""

from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.pages.factories import add_verified_record, build_tournament, play_stage
from tournaments.models import Match, Round
from tournaments.services import schedule

pytestmark = pytest.mark.django_db


class Audit(HTMLParser):
    def __init__(self):
        super().__init__()
        self.problems, self.labels, self.fields = [], set(), []
        self.h1 = self.main = 0
        self.table_stack = []
        self.unnamed_svg = None  # an svg named by a <title> first child is fine

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.unnamed_svg is not None:
            if tag != "title":
                self.problems.append(f"svg without a name: {self.unnamed_svg}")
            self.unnamed_svg = None
        if tag == "h1":
            self.h1 += 1
        elif tag == "main":
            self.main += 1
        elif tag == "table":
            self.table_stack.append(False)
        elif tag == "caption" and self.table_stack:
            self.table_stack[-1] = True
        elif tag == "th" and "scope" not in a:
            self.problems.append("th without scope")
        elif tag == "label" and a.get("for"):
            self.labels.add(a["for"])
        elif tag in ("input", "select", "textarea") and a.get("type") not in ("hidden", "submit"):
            self.fields.append(a)
        elif tag == "svg" and a.get("aria-hidden") != "true":
            if a.get("role") not in ("img", "group"):
                self.problems.append(f"svg without role: {a.get('class')}")
            if not (a.get("aria-label") or a.get("aria-labelledby")):
                self.unnamed_svg = a.get("class")
        elif tag == "img" and "alt" not in a:
            self.problems.append("img without alt")

    def handle_endtag(self, tag):
        if tag == "table" and self.table_stack and not self.table_stack.pop():
            self.problems.append("table without caption")

    def check(self):
        for field in self.fields:
            if not (field.get("aria-label") or field.get("id") in self.labels):
                self.problems.append(f"unlabelled field {field.get('name')}")
        if self.main != 1:
            self.problems.append(f"{self.main} main landmarks")
        if self.h1 != 1:
            self.problems.append(f"{self.h1} h1 headings")
        return self.problems


def audit(html):
    parser = Audit()
    parser.feed(html)
    return parser.check()


def test_public_pages_and_desk_pass_the_accessibility_checks(client):
    tournament = build_tournament(8, slug="accessibile", groups=2)
    schedule.close_stage(tournament.stages.get(order=1), per_group=2)
    knockout = tournament.stages.get(order=2)
    play_stage(knockout, limit=1)
    semi = Match.objects.filter(round__stage=knockout, status="scheduled").exclude(away=None)
    add_verified_record(semi.first(), seed=5)
    group = tournament.stages.get(order=1).groups.first()
    line = group.members.first().line
    match = Match.objects.filter(group=group, status="done").first()
    slug = tournament.slug
    urls = [
        reverse("public:home"),
        reverse("public:tournament", args=[slug]),
        reverse("public:stage", args=[slug, group.stage_id]),
        reverse("public:stage", args=[slug, knockout.pk]),
        reverse("public:group", args=[slug, group.pk]),
        reverse("public:round", args=[slug, Round.objects.filter(stage=knockout).first().pk]),
        reverse("public:match", args=[slug, match.pk]),
        reverse("public:match", args=[slug, semi.first().pk]),
        reverse("public:line", args=[line.pk]),
        reverse("public:player", args=[line.members.first().player_id]),
        reverse("desk:login"),
    ]
    organizer = User.objects.create_user("a11y", password="x-pass-12345")
    tournament.organizers.add(organizer)
    desk_urls = [
        reverse("desk:home"),
        reverse("desk:tournament", args=[slug]),
        reverse("desk:match", args=[slug, semi.first().pk]),
    ]
    for url in urls:
        assert audit(client.get(url).content.decode()) == [], url
    client.force_login(organizer)
    for url in desk_urls:
        assert audit(client.get(url).content.decode()) == [], url
