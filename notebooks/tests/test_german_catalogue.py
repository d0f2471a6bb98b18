"""The German catalogue is complete and compiled: every msgstr filled in, none fuzzy (a
guess by msgmerge that nobody checked), and the committed .mo says what the .po says.

The .mo is compared by content, not by file times: a fresh clone gives both files the time
of the checkout, in either order."""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path

from django.conf import settings

PO = Path(settings.BASE_DIR) / "locale" / "de" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
KEYWORD = re.compile(r"^(msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?) (\".*\")$")


def read_po(path: Path) -> list[dict]:
    """The entries of a .po file: flags, msgctxt, msgid, msgid_plural, msgstr ({n: text})."""
    entries: list[dict] = []
    entry: dict | None = None
    field = ""
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if not line.strip():
            if entry is not None:
                entries.append(entry)
            entry = None
            continue
        if entry is None:
            entry = {
                "flags": set(),
                "msgctxt": None,
                "msgid": "",
                "msgid_plural": None,
                "msgstr": {},
            }
        if line.startswith("#~"):  # an obsolete entry, no longer used
            entry["obsolete"] = True
        elif line.startswith("#,"):
            entry["flags"].update(flag.strip() for flag in line[2:].split(","))
        elif line.startswith("#"):
            continue
        elif match := KEYWORD.match(line):
            field, text = match.group(1), ast.literal_eval(match.group(2))
            if field.startswith("msgstr"):
                index = int(field[7:-1]) if "[" in field else 0
                entry["msgstr"][index] = text
                field = f"msgstr{index}"
            else:
                entry[field] = text
        elif line.startswith('"'):
            text = ast.literal_eval(line)
            if field.startswith("msgstr"):
                entry["msgstr"][int(field[6:])] += text
            else:
                entry[field] = (entry[field] or "") + text
    return [entry for entry in entries if entry["msgid"] and not entry.get("obsolete")]


def test_every_german_message_is_translated_and_none_is_fuzzy():
    entries = read_po(PO)
    assert len(entries) > 100  # the catalogue is really there

    empty = [e["msgid"] for e in entries if not e["msgstr"] or not all(e["msgstr"].values())]
    fuzzy = [e["msgid"] for e in entries if "fuzzy" in e["flags"]]
    plural = [e["msgid"] for e in entries if e["msgid_plural"] and len(e["msgstr"]) != 2]

    assert empty == [], "untranslated in locale/de/LC_MESSAGES/django.po"
    assert fuzzy == [], "fuzzy (unchecked) in locale/de/LC_MESSAGES/django.po"
    assert plural == [], "German needs two plural forms"


def test_the_compiled_german_catalogue_matches_the_po_file():
    with MO.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)

    stale = []
    for entry in read_po(PO):
        msgid, msgstr = entry["msgid"], entry["msgstr"]
        if entry["msgctxt"] is not None:
            same = compiled.pgettext(entry["msgctxt"], msgid) == msgstr[0]
        elif entry["msgid_plural"] is not None:
            same = [compiled.ngettext(msgid, entry["msgid_plural"], n) for n in (1, 2)] == [
                msgstr[0],
                msgstr.get(1),
            ]
        else:
            same = compiled.gettext(msgid) == msgstr[0]
        if not same:
            stale.append(msgid)

    assert stale == [], "locale/de/LC_MESSAGES/django.mo is stale: run manage.py compilemessages"


def test_the_reader_sees_an_untranslated_a_fuzzy_and_a_plural_entry(tmp_path):
    """The checks above can fail: the reader finds what they look for."""
    po = tmp_path / "django.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Language: de\\n"\n\n'
        'msgid "Ready"\nmsgstr ""\n\n'
        '#, fuzzy, python-format\nmsgid "Page %(n)s"\nmsgstr "Seite %(n)s"\n\n'
        'msgid "%(n)s page"\nmsgid_plural "%(n)s pages"\nmsgstr[0] "%(n)s Seite"\n'
        'msgstr[1] ""\n"%(n)s Seiten"\n',
        encoding="utf-8",
    )

    entries = {entry["msgid"]: entry for entry in read_po(po)}

    assert entries["Ready"]["msgstr"] == {0: ""}
    assert "fuzzy" in entries["Page %(n)s"]["flags"]
    assert entries["%(n)s page"]["msgstr"] == {0: "%(n)s Seite", 1: "%(n)s Seiten"}
