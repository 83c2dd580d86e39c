"""The Italian catalog is complete and compiled, and the interface really comes out in Italian.

English is the source language: locale/en only has to exist (empty msgstr). Italian is the
default (LANGUAGE_CODE "it"), so an untranslated or fuzzy Italian entry is English on a page.
After adding strings: makemessages -l it -l en (see locale/it/LC_MESSAGES/django.po's header),
translate, compilemessages.
"""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, ngettext, pgettext

LOCALE = Path(settings.BASE_DIR) / "locale"
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
