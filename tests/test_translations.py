"""The Italian catalog is complete and compiled, and the interface really comes out in Italian.

English is the source language: locale/en only has to exist (empty msgstr). Italian is the
default (LANGUAGE_CODE "it"), so an untranslated or fuzzy Italian entry is English on a page.
After adding strings: makemessages -l it -l en (see the header of
config/locale/it/LC_MESSAGES/django.po), translate, compilemessages.
"""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, ngettext, pgettext

LOCALE = Path(settings.LOCALE_PATHS[0])
IT_PO = LOCALE / "it" / "LC_MESSAGES" / "django.po"
IT_MO = LOCALE / "it" / "LC_MESSAGES" / "django.mo"
EN_PO = LOCALE / "en" / "LC_MESSAGES" / "django.po"

# %(name)s / %(n)d / %(s).1f, bare %s / %d, {name}, and HTML tags must survive translation.
PLACEHOLDER = re.compile(
    r"%\([A-Za-z_][A-Za-z0-9_]*\)[-+ #0]*\d*(?:\.\d+)?[sdifr]|%[sdifr]|\{[A-Za-z_0-9]*\}|<[^>]+>"
)


def _placeholders(text: str) -> list[str]:
    return sorted(PLACEHOLDER.findall(text))


def _label(entry: polib.POEntry) -> str:
    where = ", ".join(f"{path}:{line}" for path, line in entry.occurrences[:2])
    ctx = f" [context {entry.msgctxt!r}]" if entry.msgctxt else ""
    return f"{entry.msgid!r}{ctx} ({where})"


@pytest.fixture(scope="module")
def it_catalog() -> polib.POFile:
    assert IT_PO.exists(), f"{IT_PO} is missing: run makemessages -l it"
    return polib.pofile(str(IT_PO))


def _live(catalog: polib.POFile) -> list[polib.POEntry]:
    return [e for e in catalog if not e.obsolete]


def test_catalog_files_exist():
    for path in (IT_PO, IT_MO, EN_PO):
        assert path.exists(), f"{path} is missing"


def test_italian_header_is_usable(it_catalog):
    assert not it_catalog.metadata_is_fuzzy, "the header is fuzzy: msgfmt would ignore it"
    assert it_catalog.metadata.get("Language") == "it"
    assert "nplurals=2" in it_catalog.metadata.get("Plural-Forms", "")


def test_no_untranslated_italian_entries(it_catalog):
    missing = [
        _label(e) for e in _live(it_catalog) if not e.translated() and "fuzzy" not in e.flags
    ]
    assert not missing, f"{len(missing)} untranslated Italian entries:\n" + "\n".join(missing)


def test_no_fuzzy_italian_entries(it_catalog):
    fuzzy = [_label(e) for e in _live(it_catalog) if "fuzzy" in e.flags]
    assert not fuzzy, (
        f"{len(fuzzy)} fuzzy Italian entries (check each, then drop the flag):\n" + "\n".join(fuzzy)
    )


def test_plural_entries_fill_every_form(it_catalog):
    short = [
        _label(e)
        for e in _live(it_catalog)
        if e.msgid_plural and not all(e.msgstr_plural.get(i) for i in (0, 1))
    ]
    assert not short, "plural entries without both msgstr[0] and msgstr[1]:\n" + "\n".join(short)


def test_placeholders_survive_translation(it_catalog):
    broken = []
    for e in _live(it_catalog):
        if e.msgid_plural:
            pairs = [
                (e.msgid, e.msgstr_plural.get(0, "")),
                (e.msgid_plural, e.msgstr_plural.get(1, "")),
            ]
        else:
            pairs = [(e.msgid, e.msgstr)]
        for source, target in pairs:
            if target and _placeholders(source) != _placeholders(target):
                broken.append(f"{_label(e)}: {target!r}")
    assert not broken, "placeholders or HTML differ from the source:\n" + "\n".join(broken)


def test_compiled_catalog_matches_the_po(it_catalog):
    """django.mo is what Django reads: it must hold every translation of django.po."""
    compiled = {(e.msgctxt, e.msgid): e for e in polib.mofile(str(IT_MO)) if e.msgid}
    stale = []
    for e in _live(it_catalog):
        if not e.translated():
            continue
        got = compiled.get((e.msgctxt, e.msgid))
        if got is None:
            stale.append(_label(e))
        elif e.msgid_plural:
            if {int(k): v for k, v in got.msgstr_plural.items()} != {
                int(k): v for k, v in e.msgstr_plural.items()
            }:
                stale.append(_label(e))
        elif got.msgstr != e.msgstr:
            stale.append(_label(e))
    assert not stale, (
        f"{len(stale)} entries differ between django.po and django.mo: "
        "run manage.py compilemessages --ignore=.venv\n" + "\n".join(stale[:50])
    )


def test_key_strings_come_out_in_italian():
    with translation.override("it"):
        assert gettext("Standings") == "Classifica"
        assert gettext("Scopa tournaments") == "Tornei di scopa"
        assert gettext("Deal") == "Smazzata"
        assert gettext("Bye") == "Riposo"
        assert gettext("Knock-out bracket") == "Tabellone a eliminazione diretta"
        assert pgettext("side of a match", "Away") == "Ospite"
        assert ngettext("%(n)s line", "%(n)s lines", 1) % {"n": 1} == "1 linea"
        assert ngettext("%(n)s line", "%(n)s lines", 3) % {"n": 3} == "3 linee"
    with translation.override("en"):
        assert gettext("Standings") == "Standings"


def test_italian_is_the_default_language():
    assert settings.LANGUAGE_CODE == "it"
    with translation.override(settings.LANGUAGE_CODE):
        assert gettext("Latest results") == "Ultimi risultati"


@pytest.mark.django_db
def test_home_page_follows_the_language(client):
    italian = client.get("/", HTTP_ACCEPT_LANGUAGE="it")
    assert italian.status_code == 200
    assert '<html lang="it">' in italian.content.decode()
    assert "Tornei di scopa" in italian.content.decode()
    assert "Scopa tournaments" not in italian.content.decode()

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    english = client.get("/")
    assert english.status_code == 200
    assert '<html lang="en">' in english.content.decode()
    assert "Scopa tournaments" in english.content.decode()


# --------------------------------------------------------------------------- pages in Italian

# Italian names of the project's models that are feminine: Django's generic admin text puts
# them after "un altro" / "Il" / "selezionati", which does not agree.
FEMININE = ("fase", "fasi", "linea", "linee", "iscrizione", "iscrizioni", "modifica", "modifiche")
_NAMES = "|".join(FEMININE)
DISAGREEING = re.compile(
    rf"\b(?:un altro|il|lo|questo)\s+(?:{_NAMES})\b"
    r"|\b(?:fasi|linee|iscrizioni|modifiche)\s+selezionati\b",
    re.IGNORECASE,
)
TAG = re.compile(r"<script.*?</script>|<style.*?</style>|<[^>]+>", re.DOTALL)


def _text(html: str) -> str:
    return " ".join(TAG.sub(" ", html).split())


def _english_msgids(catalog: polib.POFile) -> list[str]:
    """Catalog sentences (two words or more, no placeholder) whose Italian differs: seeing one
    of them on an Italian page means English was left there."""
    return [
        e.msgid
        for e in _live(catalog)
        if " " in e.msgid
        and len(e.msgid) > 14
        and not _placeholders(e.msgid)
        and not e.msgid_plural
        and e.msgstr != e.msgid
    ]


@pytest.fixture
def italian_admin(client, django_user_model):
    from tests.pages.factories import build_tournament

    tournament = build_tournament(4, slug="italiano", play=False)
    admin = django_user_model.objects.create_superuser("capo", "capo@example.org", "x-pass-12345")
    client.force_login(admin)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    return client, tournament


@pytest.mark.django_db
def test_admin_italian_agrees_in_gender_and_names_the_product(italian_admin):
    from django.urls import reverse

    client, tournament = italian_admin
    stage = tournament.stages.get(order=1)
    pages = [
        reverse("admin:index"),
        reverse("admin:tournaments_tournament_change", args=[tournament.pk]),
        reverse("admin:tournaments_stage_changelist"),
        reverse("admin:tournaments_entry_changelist"),
        reverse("admin:tournaments_changelog_changelist"),
    ]
    texts = [_text(client.get(url).content.decode()) for url in pages]
    change = client.post(
        reverse("admin:tournaments_stage_change", args=[stage.pk]),
        {
            "tournament": tournament.pk,
            "order": 1,
            "name": "Gironi",
            "kind": stage.kind,
            "status": stage.status,
            "groups-TOTAL_FORMS": "0",
            "groups-INITIAL_FORMS": "0",
            "groups-MIN_NUM_FORMS": "0",
            "groups-MAX_NUM_FORMS": "1000",
        },
        follow=True,
    )
    texts.append(_text(change.content.decode()))
    for text in texts:
        assert not DISAGREEING.findall(text), DISAGREEING.findall(text)
        assert "Amministrazione Django" not in text
        assert "Choose " not in text
    assert "Tornei di scopa" in texts[0]


@pytest.mark.django_db
def test_change_log_in_the_admin_speaks_in_sentences(italian_admin):
    from django.urls import reverse

    from tests.pages.factories import play_stage

    client, tournament = italian_admin
    play_stage(tournament.stages.get(order=1), limit=1)
    text = _text(client.get(reverse("admin:tournaments_changelog_changelist")).content.decode())
    assert "winner=" not in text and "result.entered" not in text


@pytest.mark.django_db
def test_no_english_left_on_italian_desk_and_admin_pages(italian_admin, it_catalog):
    from django.urls import reverse

    client, tournament = italian_admin
    from django.contrib.auth import get_user_model

    tournament.organizers.add(get_user_model().objects.get(username="capo"))
    english = _english_msgids(it_catalog)
    round_ = tournament.stages.get(order=1).rounds.first()
    line = tournament.entries.first().line
    pages = [
        reverse("desk:home"),
        reverse("desk:tournament", args=[tournament.slug]),
        reverse("desk:lines", args=[tournament.slug]),
        reverse("desk:withdraw", args=[tournament.slug, line.pk]),
        reverse("desk:sheet", args=[tournament.slug, round_.pk]),
        reverse("desk:projector", args=[tournament.slug, round_.pk]),
        reverse("desk:podium", args=[tournament.slug]),
        reverse("desk:new"),
        reverse("admin:index"),
        reverse("admin:tournaments_tournament_change", args=[tournament.pk]),
    ]
    left = {}
    for url in pages:
        text = _text(client.get(url).content.decode())
        found = [msgid for msgid in english if msgid in text]
        if found:
            left[url] = found
    assert not left, f"English on Italian pages: {left}"
