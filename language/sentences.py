"""Sentences a person can read on their own, from text as a page gives it: paragraphs rebuilt
from a PDF's wrapped lines (headings, captions, code and list items kept apart), then the
sentences worth quoting alone: whole, prose, about the subject rather than about the
document, and free of addresses, version strings and words the PDF ran together. The
offline documents (generation/documents/) and the extractive summary (ingest/summaries.py)
read sources with them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from language.words import ADMONITIONS

# A wrapped line fills most of the text's width; a shorter one ends its paragraph (or is a
# heading, a caption, a table row) unless the next line plainly continues it.
FULL_LINE_SHARE = 0.7
BULLET_RE = re.compile(r"^(?:[•◦▪●■–*]|-(?=\s)|\d{1,2}[.)](?=\s))\s*")
MIN_WORDS, MAX_WORDS = 6, 35

URL_RE = re.compile(r"://|\bwww\.|\b[\w-]+\.(?:org|com|net|html?|de)\b", re.I)
VERSION_RE = re.compile(r"\b\d+\.\d+\.\d+|\b(?:version|Version|release|Release)\s*\d|\bv\d+\.\d")
SECTION_REF_RE = re.compile(
    r"\b(?:Section|Chapter|Table|Figure|Abschnitt|Kapitel|Tabelle|Abbildung)\s+\d", re.I
)
# A sentence about the text itself, or one that leans on what comes before or after it.
SELF_REFERENCE_RE = re.compile(
    r"\b(?:this|the present|the following)\s+(?:document|book|manual|guide|chapter|section|"
    r"reference|tutorial|page|table|list|example|examples|command|commands)\b"
    r"|\b(?:dies\w*|folgende\w*|nachfolgende\w*)\s+(?:Dokument|Buch|Handbuch|Anleitung|Kapitel|"
    r"Abschnitt|Referenz|Seite|Tabelle|Liste|Beispiel\w*|Befehl\w*)\b"
    r"|^(?:the\s+)?following\b|^(?:die\s+|der\s+|das\s+)?folgende\w*\b|\bas follows\b"
    r"|\bfollowing(?:s)?\W*$|\bwie folgt\b|\bfolgende\w*\W*$"
    r"|\b(?:below|above|unten|oben)\b",
    re.I,
)
LEANING_START_RE = re.compile(
    r"^(?:It|This|These|That|Those|They|Such|Here|He|She|So|But|And|Or|Also|Then|"
    r"Otherwise|Similarly|Es|Dies|Diese|Dieser|Dieses|Hier|Dort|Er|Aber|Und|Oder|"
    r"Auch|Dann|Sonst|Also|Daher|Dabei|Jetzt|Dazu|Deshalb|Danach|Somit|Dennoch|Trotzdem|"
    r"Außerdem|Zudem|Hierbei|Hiermit|Seitdem|Since then|Please|Bitte|See|Siehe|Lesen Sie|"
    r"Note|Hinweis|I|Ich)\b"
    r"|^\d+[A-ZÄÖÜ]"  # a footnote's number run into the sentence
)
FIRST_PERSON_RE = re.compile(r"\b(?:I|me|my|ich|mir|mich|mein\w*)\b")
# An instruction to the reader ("Press Enter.", "Wählen Sie … aus"): a step, not a statement.
IMPERATIVE_RE = re.compile(
    r"^(?:Press|Click|Type|Select|Move|Run|Execute|Install|Open|Start|Choose|Enter|Edit|Go|"
    r"Remove|Copy|Insert|Tick|Push|Pull|Restart|Reboot|Log in|Sign in)\b|^[A-ZÄÖÜ]\w*en Sie\b"
)
# A sentence cut at an abbreviation's full stop ("… such as, e.g.", "(a.k.a.").
ENDS_ON_ABBREVIATION_RE = re.compile(
    r"\b(?:e\.g|i\.e|a\.k\.a|z\.\s?B|d\.\s?h|u\.\s?a|bzw|vgl|cf|ca|evtl|ggf|usw)\.$", re.I
)
# A token of code or a path: a reader quotes prose, not a command line.
TECHNICAL_RE = re.compile(r"[/\\=$<>{}|_@#^~]|^-|\w\(\d\)|\w:\d")
# Two lines of a table or a box run together: "… setuid root binary For applications …".
MERGED_LINES_RE = re.compile(r"[a-z] (?:For|The|This|These|It|In|If|When|Wenn|Für) [a-z]")
# Words longer than this are two run together by the PDF's text, except in languages that
# write compounds as one word.
LONGEST_WORD = 20
LONGEST_COMPOUND = {"de": 30, "nl": 30, "sv": 30, "da": 30, "no": 30, "fi": 30}


def paragraphs(text: str, *, width: int) -> list[str]:
    """The text's paragraphs and list items, each on one line: a line continues the one
    before when that one filled the width (`width`: the source's usual full line), or when it
    starts in lower case after a line that ended mid-sentence."""
    full = max(30, int(width * FULL_LINE_SHARE))
    found: list[list[str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            found.append([])
            continue
        bullet = BULLET_RE.match(line)
        if bullet:
            found.append([line[bullet.end() :]])
            continue
        if line.casefold() in ADMONITIONS:  # a note or tip box's label
            found += [[line], []]
            continue
        previous = found[-1][-1] if found and found[-1] else ""
        continues = previous and (
            (len(previous) >= full and not previous.endswith(":"))
            or (line[0].islower() and not previous.endswith((".", "!", "?", ":")))
        )
        if continues:
            found[-1].append(line)
        else:
            found.append([line])
    return [" ".join(lines) for lines in found if lines]


def line_width(texts: Iterable[str]) -> int:
    """The length of the texts' full lines: the 90th percentile of their line lengths."""
    lengths = sorted(len(line.strip()) for text in texts for line in text.splitlines())
    return lengths[int(len(lengths) * 0.9)] if lengths else 0


def is_whole(text: str) -> bool:
    """Starts like a sentence (a capital) and ends with a full stop or "!", not at an
    abbreviation."""
    body = text.lstrip("\"'“„”‘’«»")
    # A sentence that starts with a number is mostly the tail of one cut at an abbreviation.
    return (
        bool(body)
        and body[0].isupper()
        and text.endswith((".", "!"))
        and not ENDS_ON_ABBREVIATION_RE.search(text)
    )


def is_prose(text: str, language: str = "") -> bool:
    """Words rather than code, and no address, version string or run-together word."""
    words = text.split()
    longest = LONGEST_COMPOUND.get(language, LONGEST_WORD)
    technical = sum(bool(TECHNICAL_RE.search(word)) for word in words)
    return (
        technical <= max(1, len(words) // 8)
        and not URL_RE.search(text)
        and not VERSION_RE.search(text)
        and not re.search(rf"[^\W\d_]{{{longest + 1},}}", text)
        and not MERGED_LINES_RE.search(text)
    )


def stands_alone(text: str, language: str = "") -> bool:
    """A sentence worth quoting alone: whole prose of a sensible length, not a question,
    not about the document itself, not leaning on the sentence before."""
    words = text.split()
    return (
        MIN_WORDS <= len(words) <= MAX_WORDS
        and is_whole(text)
        and is_prose(text, language)
        and not SECTION_REF_RE.search(text)
        and not SELF_REFERENCE_RE.search(text)
        and not LEANING_START_RE.match(text)
        and not FIRST_PERSON_RE.search(text)
        and not IMPERATIVE_RE.match(text)
    )
