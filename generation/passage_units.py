"""A retrieved passage cut into what an extractive answer can quote: sentences, table rows
and list items, and command lines, each with what it says about itself (a question, a
sentence about the document, the cut-off start of a sentence).

Text read from a PDF keeps the page's line breaks. A line that fills the width of the
text wraps into the next one; a shorter line ends its block (a table row, a list item, a
command), and so does a line ending a sentence well short of the longest: a heading or a row
is never glued to the sentence next to it. Headings, admonition labels ("Note", "Tipp"),
table captions, contents lines and lines without a letter are left out, and a line of a few
words on its own (a table's header row) is marked as a label: they name things, they do
not answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generation.tables import with_named_rows
from language.words import ADMONITIONS, ends_a_sentence

# A line at least WRAP_SHARE of the text's width fills it: it wraps into the next. The
# width is that of the longer lines (WIDTH_PERCENTILE), not the longest: one long path
# sticks out of the margin, and boxed notes are narrower than the page.
WRAP_SHARE = 0.7
WIDTH_PERCENTILE = 0.85
MIN_WIDTH = 80  # a passage of table rows only still wraps near a page's width

# "1.2.2 Filesystem internals", "A.3 Tools", "4. Netzwerk", "Chapter 4", "Kapitel 4
# Netzwerk" with no closing punctuation ("7. You log in again." is a numbered step, not a
# heading; "990 wird als Standardwert … verwendet" a table row).
NUMBERED_HEADING_RE = re.compile(
    r"^(?:(?:(?:\d+|[A-Z])(?:\.\d+)+\.?|(?:Chapter|Kapitel|Appendix|Anhang)\s+\w+)\s+\S.{0,90}"
    r"|\d+\.\s+\S.{0,50})(?<![.!?:;,])$"
)
CAPTION_RE = re.compile(
    r"^(?:Table|Figure|Listing|Example|Tabelle|Abbildung|Beispiel)\s+[\dA-Z][\d.]*:"
)
CONTENTS_RE = re.compile(r"(?:\.\s?){4,}\s*\d+$|\s{3,}\d+$")
# "$ ls -l", "# apt-get install foo" (root's prompt; "# Introduction" is a Markdown heading).
COMMAND_RE = re.compile(r"^(?:\$\s+\S|#\s+[a-z./~\[<(])")
# A Markdown heading ("## Sleeper cars", "# Nachtzüge"): tested after COMMAND_RE, so root's
# prompt keeps its command.
MARKDOWN_HEADING_RE = re.compile(r"^#{1,6}\s+\S")
BULLET_RE = re.compile(r"^(?:[•◦▪‣∙·*–-]|\d{1,2}[.)])\s")
CLOSING_RE = re.compile(r"[.!?…:;][\"'”’“»«)\]]*$")
SENTENCE_CLOSED_RE = re.compile(r"[.!?…][\"'”’“»«)\]]*$")
SENTENCE_END_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“„”(\[]?[\w$#•])")
# Sentences about the document rather than its subject ("This chapter describes …",
# "In diesem Abschnitt …"), and bare pointers elsewhere ("See Section 9.3.").
ABOUT_DOCUMENT_RE = re.compile(
    r"\b(?:this|the present|the following|the next|the previous|these)\s+"
    r"(?:chapter|section|document|documentation|manual|book|guide|tutorial)s?\b"
    r"|\b(?:dieses|diesem|dieser|diese|folgende[nm]?|nächsten?|vorigen?)\s+"
    r"(?:Kapitels?|Abschnitts?|Dokuments?|Dokumentation|Handbuchs?|Buch(?:es)?|Anleitung)\b",
    re.IGNORECASE,
)
POINTER_RE = re.compile(
    r"^[(]?(?:please\s+|bitte\s+)?(?:see|refer to|siehe|lesen sie|schauen sie)\b.{0,120}$",
    re.IGNORECASE,
)
# Words that lean on the sentence before: "This is why …", "Es wird …", "They …". Not
# "Das" or "Sie" (in German mostly the article and the polite "you"), nor "There are".
EXPLETIVE_RE = re.compile(
    r"^(?:es gibt|it is (?:\w+ )?(?:possible|recommended|a good idea))\b", re.I
)
# fmt: off
DEPENDENT_OPENERS = frozenset((
    "this", "these", "that", "those", "it", "its", "they", "their", "them", "such", "then",
    "however", "also", "but", "otherwise", "instead", "thus", "so", "therefore", "hence",
    "moreover", "furthermore", "alternatively", "similarly", "dies", "diese", "dieser",
    "dieses", "diesem", "diesen", "es", "er", "dann", "daher", "deshalb", "dazu", "dabei",
    "damit", "dafür", "jedoch", "aber", "außerdem", "allerdings", "ebenso", "sonst",
    "stattdessen", "also", "so", "solche",
))
# fmt: on
# A line ending in one of these continues, however short ("View log of the unit from" /
# "the last boot"): a table cell wrapped in its column.
# fmt: off
CONTINUING_WORDS = frozenset((
    "a", "an", "the", "of", "to", "from", "for", "with", "and", "or", "in", "on", "at", "by",
    "as", "into", "than", "that", "which", "is", "are", "be", "der", "die", "das", "den",
    "dem", "des", "ein", "eine", "einer", "einen", "einem", "und", "oder", "von", "zu", "für",
    "mit", "im", "in", "an", "auf", "aus", "bei", "nach", "über", "unter", "als", "ist",
    "sind", "dass", "wie",
))
# fmt: on
# A sentence that announces what follows ("… as follows.", "… wie folgt:", "… to contain
# the following.", "… mit folgendem Befehl.").
ANNOUNCING_RE = re.compile(
    r":$|\b(?:as follows|wie folgt)\b|\b(?:the following|folgende[nmrs]?)(?:\s+\w+)?\.$",
    re.IGNORECASE,
)
# A line ending so is followed by what it announces, not by more of its paragraph.
ANNOUNCED_END_RE = re.compile(
    r"\b(?:as follows|wie folgt|the following|folgende[nmrs]?)(?:\s+\w+)?[.:]$", re.IGNORECASE
)
# A sentence may begin with a command's manual page in lower case ("chgrp(1) is used …").
MANUAL_PAGE_START_RE = re.compile(r"^[a-z][\w.+-]*\(\d\w*\)")
# "… used in the past?", not "echo $?" or "56?" in a table.
QUESTION_RE = re.compile(r"[^\W\d_][\"'”’)»]*\?[\"'”’)»]*$")
FIRST_WORD_RE = re.compile(r"^[\"'“„(]*(\w+)")
LAST_WORD_RE = re.compile(r"(\w+)$")
LETTER_RE = re.compile(r"[^\W\d_]")
# A word of prose: letters, maybe quoted or followed by punctuation ("data.", "„Datei“,").
PLAIN_WORD_RE = re.compile(r"^[\"'“„(]*[^\W\d_]+(?:[-’'][^\W\d_]+)*[\"'”“)]*[.,;:!?]*[\"'”“)]*$")
PROSE_WORD_SHARE = 0.75
MAX_LABEL_WORDS = 3


@dataclass(frozen=True)
class Unit:
    """One quotable piece of a passage, in reading order (`position`)."""

    text: str
    position: int
    paragraph: int = 0  # units of one block of prose share it
    code: bool = False  # a command line with its output lines
    question: bool = False
    about_document: bool = False
    fragment: bool = False  # the cut-off end of a sentence that began before the passage
    cut_off: bool = False  # a sentence the passage ends in the middle of
    depends_on_previous: bool = False
    introduces_next: bool = False  # ends with ":" or says "as follows": a list or command follows
    # A line of a few words on its own, not ending as a sentence: a table's header row
    # ("file content"), a label. It names things; it does not answer.
    label: bool = False
    after_heading: bool = False  # the first unit after a heading: a new section begins


def _normal(line: str) -> str:
    return " ".join(line.split()).casefold()


def _is_heading(line: str, titles: set[str]) -> bool:
    lowered = _normal(line)
    return (
        lowered in titles
        or lowered.rstrip(":") in ADMONITIONS
        or bool(NUMBERED_HEADING_RE.match(line))
        or bool(MARKDOWN_HEADING_RE.match(line))
        or bool(CAPTION_RE.match(line))
        or bool(CONTENTS_RE.search(line))
    )


def _ends_output(line: str, titles: set[str]) -> bool:
    lowered = _normal(line)
    return lowered in titles or lowered in ADMONITIONS or bool(CAPTION_RE.match(line))


def _looks_like_prose(line: str) -> bool:
    """A line of sentences rather than a command's output ("-rw-r--r-- 1 root", "0",
    "PING (149.20.4.15) 1472(1500) bytes of data.", "ping: local error: …")."""
    words = line.split()
    plain = sum(bool(PLAIN_WORD_RE.match(word)) for word in words)
    opens = line[:1].isupper() or bool(BULLET_RE.match(line))
    return len(words) >= 4 and opens and plain >= PROSE_WORD_SHARE * len(words)


def split_sentences(block: str) -> list[str]:
    """The sentences of a block of prose: split after ., !, ? or …, not after an
    abbreviation or an initial ("z. B.", "e.g.")."""
    pieces: list[str] = []
    start = 0
    for match in SENTENCE_END_RE.finditer(block):
        piece = block[start : match.start()].strip()
        if not ends_a_sentence(piece):
            continue
        rest = block[match.end() :]
        if rest[:1].islower() and not MANUAL_PAGE_START_RE.match(rest):
            continue  # "… etc. and more": a sentence does not start in lower case
        pieces.append(block[start : match.end()].strip())
        start = match.end()
    pieces.append(block[start:].strip())
    return [piece for piece in pieces if LETTER_RE.search(piece)]


@dataclass(frozen=True)
class _Block:
    text: str
    code: bool
    after_heading: bool  # the first block after a heading (or the passage's opening one)
    lines: int


def _blocks(text: str, titles: set[str]) -> list[_Block]:
    """The passage's blocks of prose and of commands, in order."""
    return _scan(text, titles)[0]


def reflow(text: str, *, section: tuple[str, ...] = ()) -> str:
    """The text with each line break the page's width made (a line of prose wrapping into the
    next one of its paragraph) turned into a space, every other break kept: a passage that
    reads as paragraphs in a panel narrower than the page. As long as the text, so offsets
    into one hold in the other."""
    joined = _scan(text, {_normal(title) for title in section})[1]
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    characters = list(text)
    for index in joined:
        characters[starts[index] - 1] = " "
    return "".join(characters)


def _scan(text: str, titles: set[str]) -> tuple[list[_Block], set[int]]:
    """The passage's blocks, and the numbers of the lines (from 0) that continue the line
    before them in a block of prose."""
    lines = [line.strip() for line in text.split("\n")]
    lengths = sorted(len(line) for line in lines)
    width = max(MIN_WIDTH, lengths[int(WIDTH_PERCENTILE * (len(lengths) - 1))])
    # A passage of a few lines, most of them short (a table, a list), puts the percentile
    # near the short ones. A sentence that ends short of the longest line still ends its
    # block ("… in the log files." before a table's header "file content"): closing at a
    # sentence's end cuts no sentence, whatever the longest line is.
    longest = max(MIN_WIDTH, lengths[-1])
    blocks: list[_Block] = []
    current: list[str] = []
    code: list[str] = []
    joined: set[int] = set()
    after_heading = False

    def close_prose() -> None:
        nonlocal after_heading
        if current:
            blocks.append(_Block(" ".join(current), False, after_heading, len(current)))
            current.clear()
            after_heading = False

    def close_code() -> None:
        nonlocal after_heading
        if code:
            blocks.append(_Block("\n".join(code), True, after_heading, len(code)))
            code.clear()
            after_heading = False

    for number, line in enumerate(lines):
        if not line:
            close_prose()
            close_code()
            continue
        if COMMAND_RE.match(line):
            close_prose()
            close_code()
            code.append(line)
            continue
        if code and not _looks_like_prose(line) and not _ends_output(line, titles):
            code.append(line)  # the command's output ("1 packets transmitted" is no heading)
            continue
        close_code()
        if _is_heading(line, titles) or not LETTER_RE.search(line):
            close_prose()
            after_heading = True
            continue
        if BULLET_RE.match(line):
            close_prose()
        if current:
            joined.add(number)
        current.append(line)
        last_word = LAST_WORD_RE.search(line)
        continues = last_word is not None and last_word.group(1).casefold() in CONTINUING_WORDS
        announces = line.endswith(":") or bool(ANNOUNCED_END_RE.search(line))
        ends_short = len(line) < WRAP_SHARE * longest and bool(SENTENCE_CLOSED_RE.search(line))
        if (len(line) < WRAP_SHARE * width and not continues) or announces or ends_short:
            close_prose()
    close_prose()
    close_code()
    return blocks, joined


def units(text: str, *, section: tuple[str, ...] = (), starts_mid_text: bool = False) -> list[Unit]:
    """The passage's quotable units. `section` is its section path (its titles are headings
    wherever they appear); `starts_mid_text`: the passage begins where an earlier one of the
    same page leaves off, so its first words end a sentence begun before it."""
    titles = {_normal(title) for title in section}
    # A table's row is quoted as its values with their columns' names; its header is none.
    text = with_named_rows(text)
    pieces: list[tuple[str, _Block, int]] = []
    for paragraph, block in enumerate(_blocks(text, titles)):
        if block.code:
            pieces.append((block.text, block, paragraph))
        else:
            pieces += [(sentence, block, paragraph) for sentence in split_sentences(block.text)]
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    ending = lines[-1] if lines else ""
    found = []
    for position, (piece, block, paragraph) in enumerate(pieces):
        opens_block = position == 0 or pieces[position - 1][1] is not block
        first_word = FIRST_WORD_RE.match(piece)
        opener = first_word.group(1).casefold() if first_word else ""
        prose = not block.code
        last = position == len(pieces) - 1
        found.append(
            Unit(
                text=piece,
                position=position,
                paragraph=paragraph,
                code=block.code,
                question=prose and bool(QUESTION_RE.search(piece)),
                about_document=prose
                and bool(ABOUT_DOCUMENT_RE.search(piece) or POINTER_RE.match(piece)),
                fragment=prose
                and position == 0
                and not block.after_heading
                and not BULLET_RE.match(piece)
                and (starts_mid_text or piece[:1].islower()),
                # The passage ends inside it (a table's last row has its caption after it);
                # its last line may hold the sentence's end only, or sentences before it too.
                cut_off=prose
                and last
                and (piece.endswith(ending) or ending.endswith(piece))
                and not CLOSING_RE.search(piece),
                depends_on_previous=prose
                and opener in DEPENDENT_OPENERS
                and not EXPLETIVE_RE.match(piece),
                introduces_next=prose and bool(ANNOUNCING_RE.search(piece)),
                label=prose
                and block.lines == 1
                and len(piece.split()) <= MAX_LABEL_WORDS
                and not CLOSING_RE.search(piece)
                and not BULLET_RE.match(piece),
                after_heading=opens_block and block.after_heading and position > 0,
            )
        )
    return found
