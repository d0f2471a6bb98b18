"""Turning the [n] markers an answer contains into verified, densely numbered citations,
and giving the sentences a model left without one the marker of the passage that supports
them (attribute_sentences)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from citations.verification import SUPPORT_THRESHOLD, best_support, sentence_spans
from generation.extractive.candidates import Candidate
from generation.extractive.neighbours import introduced
from generation.passage_units import ANNOUNCING_RE, BULLET_RE, units
from language.words import STOPWORDS, WORD_RE, terms
from notebooks.models import Message

# "[3]", "[1, 2]", "[1][2]", "[2-4]"; up to three digits so "[2020]" stays a year.
MARKER_RE = re.compile(r"\[\s*(\d{1,3}(?:\s*(?:,|;|-|–)\s*\d{1,3})*)\s*\]")
# A marker with the spaces around it: a marker stripped takes them along where they would
# be left before punctuation or doubled ("fish [9] , and" → "fish, and"), and one kept
# closes up to the punctuation after it. Only spaces beside a marker are touched: "the
# .git/ directory", "find . -name" and indented code keep theirs.
MARKER_IN_TEXT_RE = re.compile(r"([ \t]*)" + MARKER_RE.pattern + r"([ \t]*)")
PUNCTUATION = ".,;:!?)"


@dataclass(frozen=True)
class MappedAnswer:
    text: str
    # order[i] is the 1-based passage number that the answer's citation [i + 1] names.
    order: list[int]


def _numbers(group: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", group.strip()):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2:
            low, high = int(bounds[0]), int(bounds[1])
            if 0 < high - low < 20:
                numbers.extend(range(low, high + 1))
                continue
        numbers.extend(int(bound) for bound in bounds)
    return numbers


def map_markers(text: str, passage_count: int, *, order: list[int] | None = None) -> MappedAnswer:
    """Keep markers that name a passage, strip the rest, renumber by first appearance.

    `order` continues a numbering begun in other texts (a generated document's several
    fields share one list of citations); it is extended in place.
    """
    order = [] if order is None else order

    def replace(match: re.Match[str]) -> str:
        kept: list[int] = []
        for number in _numbers(match.group(2)):
            if not 1 <= number <= passage_count:
                continue  # names no passage: it must not look like a source
            if number not in order:
                order.append(number)
            new = order.index(number) + 1
            if new not in kept:
                kept.append(new)
        markers = "".join(f"[{n}]" for n in kept)
        leading, trailing = match.group(1), match.group(3)
        following = match.string[match.end() : match.end() + 1]
        closes = following == "" or following == "\n" or following in PUNCTUATION
        line_start = match.start() == 0 or match.string[match.start() - 1] == "\n"
        if markers:
            return leading + markers + ("" if closes else trailing)
        if closes or line_start:
            return ""
        return " " if leading or trailing else ""

    mapped = MARKER_IN_TEXT_RE.sub(replace, text)
    mapped = re.sub(r"(\[\d+\])(?:\s*\1)+", r"\1", mapped)  # "[1][1]", "[1] [1]" → "[1]"
    mapped = re.sub(r"[ \t]+\n", "\n", mapped)  # no trailing space where a marker ended a line
    return MappedAnswer(text=mapped.strip(), order=order)


def marker_numbers(text: str, passage_count: int) -> list[int]:
    """The passages (1 to `passage_count`) that `text`'s markers name, first named first."""
    return list(
        dict.fromkeys(
            number
            for match in MARKER_RE.finditer(text)
            for number in _numbers(match.group(1))
            if 1 <= number <= passage_count
        )
    )


def renumbered(text: str, numbers: list[int]) -> str:
    """`text`, written about the passages `numbers` as [1], [2] …, with each marker naming
    its passage's number among all: "[2]" becomes f"[{numbers[1]}]"."""
    return re.sub(r"\[(\d+)\]", lambda match: f"[{numbers[int(match.group(1)) - 1]}]", text)


def has_marker(sentence: str, passage_count: int) -> bool:
    """`sentence` holds a marker naming one of `passage_count` passages."""
    return any(
        1 <= number <= passage_count
        for match in MARKER_RE.finditer(sentence)
        for number in _numbers(match.group(1))
    )


OPENING_MARKERS_RE = re.compile(r"(?:\s*" + MARKER_RE.pattern + r")+\s*")


def move_opening_markers(text: str) -> str:
    """A marker run that opens a sentence ("[1][2] The NEW queue holds …", as small models
    write them) belongs to that sentence: it is moved to the sentence's end, before its
    closing punctuation, where readers, verification and attribution look for it. A run
    stays for the sentence before when it has no words after it on its line, or when that
    sentence has no marker and this one ends with its own ("… pond. [1] Trains leave
    at eleven. [2]": each sentence's markers after its full stop, as small models write too)."""
    spans = claim_spans(text)
    for index in range(len(spans) - 1, -1, -1):
        start, end = spans[index]
        sentence = text[start:end]
        opening = OPENING_MARKERS_RE.match(sentence)
        if opening is None:
            continue
        claim = sentence[opening.end() :]
        if hollow(claim):
            continue
        ends_marked = MARKER_RE.search(claim) or (
            index + 1 < len(spans) and hollow(text[spans[index + 1][0] : spans[index + 1][1]])
        )
        if index and ends_marked and not _own_marker(text, spans[index - 1]):
            continue
        closing = CLOSING_RE.search(claim)
        cut = closing.start() if closing else len(claim)
        moved = claim[:cut].rstrip() + " " + opening.group(0).strip() + claim[cut:]
        text = text[:start] + moved + text[end:]
    return text


def _own_marker(text: str, span: tuple[int, int]) -> bool:
    """The sentence at `span` has a marker past the run it opens with."""
    sentence = text[span[0] : span[1]]
    opening = OPENING_MARKERS_RE.match(sentence)
    return bool(MARKER_RE.search(sentence[opening.end() if opening else 0 :]))


WORD_CHAR_RE = re.compile(r"[^\W_]")  # a letter or a digit


def hollow(text: str) -> bool:
    """The text has no words or numbers but markers ("[1][2] [1][3]"): nothing to read.
    "65% [1][2]" answers how much."""
    return not WORD_CHAR_RE.search(MARKER_RE.sub("", text))


# The words with which the 1.5B model points at its passages instead of stating what they
# say ("The passage that provides this information is [1].", "Dies steht in [2].", "This
# can be seen in [1][2] and [1][3].").
POINTING_WORDS = """passage passages excerpt text source sources information provides provided
stated states mentioned described found according see seen Passage Passagen Abschnitt Text
Quelle Quellen Information Informationen steht stehen dies diese erwähnt beschrieben genannt
siehe"""


# Words that answer a yes-or-no question by themselves ("No, herons do not wait there."),
# which the stopword lists leave out of a sentence's terms.
NEGATIONS_RE = re.compile(
    r"\b(?:no|not|never|none|nothing|cannot|\w+n't|nein|nicht|nie|niemals|kein\w*)\b", re.I
)


def says_nothing(text: str, said: str, *, asked: str = "") -> bool:
    """No sentence of `text` uses a word beyond `said` (the question, its rewrite and
    Loupe's own instructions to the model) and POINTING_WORDS, and none says no: markers
    standing where the answer should be ("The tool that checks a /bin/sh script for
    bash-only constructs is [1][5].", "… erreiche ich unter [1][2]."), or none but
    markers at all; a last sentence that announces what it never gives says nothing
    either. Two words of `asked` (the question and its rewrite) written as one
    count as known too: "Welche Einstellungen schalten Upgrades ein?" answered "Die
    Einstellungen, die Upgrades einschalten, sind [1][2]." says nothing."""
    if NEGATIONS_RE.search(MARKER_RE.sub("", text)):
        return False
    known = _known_words(said) | _joined_words(asked)
    return all(
        _all_known(_claim_words(text[start:end]), known) or _announces_nothing(text, start, end)
        for start, end in claim_spans(text)
    )


def _announces_nothing(text: str, start: int, end: int) -> bool:
    """The sentence at text[start:end] introduces what follows ("… müssen Sie die folgenden
    Pakete installieren: [1][2][3]") and nothing follows it."""
    lead_in = MARKER_RE.sub("", text[start:end]).rstrip().endswith(":")
    return lead_in and not MARKER_RE.sub("", text[end:]).strip()


# A number as written ("1,0", "13.9", "825"): an answer may be nothing else.
NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


def _words(text: str) -> list[str]:
    """The words of `text` that can say something: lower-cased, no stopwords or single
    letters, numbers whole."""
    words = WORD_RE.findall(NUMBER_RE.sub(" ", text).lower())
    return [w for w in words if w not in STOPWORDS and len(w) > 1] + NUMBER_RE.findall(text)


def _known_words(said: str) -> set[str]:
    """The words an answer's sentence may use and still say nothing from the sources."""
    return set(_words(f"{MARKER_RE.sub('', said)} {POINTING_WORDS}"))


def _joined_words(text: str) -> set[str]:
    """Each two words of `text` written as one, in either order ("ein", "schalten":
    "einschalten"), the short ones that _words leaves out included."""
    words = set(WORD_RE.findall(text.lower()))
    return {first + second for first in words for second in words if first != second}


def _claim_words(sentence: str) -> tuple[str, ...]:
    """A sentence's words, without its markers and its list bullet."""
    return tuple(_words(LIST_ITEM_RE.sub("", MARKER_RE.sub("", sentence))))


def _all_known(words: Iterable[str], known: set[str]) -> bool:
    """Whether every word is a known one or an inflection of one ("passages", "stated").
    Words are compared whole, not by their stems: "Abschlussnote" says what "Abschnitt"
    does not; numbers only as written."""
    return all(word in known or any(_inflected(word, other) for other in known) for word in words)


def _inflected(word: str, other: str) -> bool:
    """`word` and `other` differ at most in an ending: all but the shorter one's last two
    letters shared, and at most three letters more ("state", "stated"; "Information",
    "Informationen")."""
    if word[0].isdigit() or other[0].isdigit():
        return False
    short, long = sorted((word, other), key=len)
    return len(long) - len(short) <= 3 and long.startswith(short[: max(len(short) - 2, 4)])


# "Passage" is the prompt's name for what the model is given: an answer about the sources
# has no cause to name it ("This command is found in the passage [1].").
# A sentence about where the sources say it, not what: it names the passages, or a page.
PASSAGE_RE = re.compile(r"\b(?:passages?|Passagen?)\b|\b(?:pages?|Seiten?)\s+\d")


def without_restatements(text: str, said: str) -> str:
    """`text` without the sentences after its first that use no word beyond `said` (the
    question, its rewrite and Loupe's own instructions to the model) and POINTING_WORDS:
    "This is stated in [2] and [3].", "The passage that provides this information is
    [1].", "The command to show the UUID of a partition is [1][2]."), or that names the
    passages or a page ("This command is found in the passage [1].", "This file is
    described on page 204 of the Debian Reference [2]."). Such a sentence holds
    nothing from the sources, yet shown it reads as a cited claim. The first sentence
    stays: it may be the answer to a yes-or-no question. A sentence or list item whose
    words one before it already holds goes too: a small model at a low temperature loops,
    and the reply that runs out of room ends in a loop's cut-off copy.
    Markers standing after a full stop ("… umstellen. [1][3]") belong to the sentence
    before, and go only with it."""
    known = _known_words(said)
    saying_nothing: list[tuple[int, int]] = []
    first, dropped = True, False
    seen: list[set[str]] = []
    for start, end in claim_spans(text):
        sentence = text[start:end]
        if hollow(sentence):
            if dropped:
                saying_nothing.append((start, end))
            continue
        # The markers a sentence opens with are the sentence before's.
        opening = OPENING_MARKERS_RE.match(sentence)
        opens = opening.end() if opening else 0
        if dropped and opens:
            saying_nothing.append((start, start + opens))
        words = _claim_words(sentence[opens:])
        dropped = not first and (
            _all_known(words, known)
            or bool(PASSAGE_RE.search(sentence))
            or any(set(words) <= before for before in seen)
        )
        first = False
        seen.append(set(words))
        if dropped:
            saying_nothing.append((start + opens, end))
    for start, end in reversed(saying_nothing):
        if text[start - 1 : start] == "\n" and text[end : end + 1] in {"", "\n"}:
            start -= 1  # a whole line (a list item) goes with its line break
        text = text[:start] + text[end:].removeprefix(" ")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# A section's number opening a line, as a PDF's headings read ("10.5.2 Grundlegende Git-Befehle").
SECTION_NUMBER_RE = re.compile(r"\d{1,3}(?:\.\d{1,3})+\.?(?=\s|$)")


def without_headings(text: str, passages: list[str]) -> str:
    """`text` without the lines that copy a section heading of a passage ("10.5.2
    Grundlegende Git-Befehle [1]", or its number alone, "1.4.8 [1]"), markers and all.
    Asked how to do something, a small model may answer with the title of the section that
    tells: it says where the answer is, not what it is, and every word of it is the
    passage's, so the support check would pass it. `passages[i]` is passage i + 1's text."""
    headings = {line.strip() for passage in passages for line in passage.splitlines()}
    headings = {line for line in headings if SECTION_NUMBER_RE.match(line)}
    copied = []
    for start, end in claim_spans(text):
        line = MARKER_RE.sub("", text[start:end]).strip().rstrip(".:").rstrip()
        number = SECTION_NUMBER_RE.match(line)
        if number and any(
            heading.startswith(line) and heading[number.end() : number.end() + 1] in {"", " "}
            for heading in headings
        ):
            copied.append((start, end))
    for start, end in reversed(copied):
        if text[start - 1 : start] == "\n" or start == 0:
            end += text[end : end + 1] == "\n"  # the whole line goes, with its line break
        text = text[:start] + text[end:]
    return text.strip()


# The bullet or number that opens a list item.
LIST_ITEM_RE = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")


# A Markdown heading, a table row, or a line that introduces what follows ("The steps
# are:"): no sentence to cite. A marker added to a table row would break the table.
NOT_A_CLAIM_RE = re.compile(r"^(?:#{1,6}\s|\|)|:$")
# A fenced code block: a marker there would be code.
FENCE_RE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.M | re.S)


def loops(text: str) -> bool:
    """Whether a reply still being written has begun to loop: its last finished sentence
    (one the text has gone on after) has the very words of two sentences before it. A small
    model at a low temperature can repeat a run of sentences until the answer's token limit,
    which on a 2-core CPU is some 40 s of text nobody keeps (without_restatements drops the
    copies). Sentences of fewer than three words never count: "Yes." may come twice."""
    spans = sentence_spans(text)[:-1]
    if len(spans) < 3:
        return False
    words = [frozenset(_claim_words(text[start:end])) for start, end in spans]
    return len(words[-1]) >= 3 and words[:-1].count(words[-1]) >= 2


def claim_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of `text`, split also at line breaks (list items),
    without headings, table rows, lead-in lines and code blocks."""
    fences = [match.span() for match in FENCE_RE.finditer(text)]
    spans = []
    for start, end in sentence_spans(text):
        for match in re.finditer(r"[^\n]+", text[start:end]):
            line = match.group(0)
            stripped = line.strip()
            begin = start + match.start() + len(line) - len(line.lstrip())
            in_code = any(low <= begin < high for low, high in fences)
            if stripped and not in_code and not NOT_A_CLAIM_RE.search(stripped):
                spans.append((begin, begin + len(stripped)))
    return spans


def uncited_spans(text: str, passage_count: int) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of `text` that makes a claim (has content words)
    and carries no marker naming one of `passage_count` passages. A marker opening the next
    sentence ("… fish. [1] Then …") counts for the sentence before, as verification reads it.
    """
    uncited = []
    next_opens_with_marker = False
    for start, end in reversed(claim_spans(text)):
        sentence = text[start:end]
        opening = OPENING_MARKERS_RE.match(sentence)
        claim = sentence[opening.end() :] if opening else sentence
        cited = next_opens_with_marker or has_marker(claim, passage_count)
        if not cited and terms(MARKER_RE.sub("", claim)):
            uncited.append((start + (opening.end() if opening else 0), end))
        next_opens_with_marker = opening is not None and has_marker(opening.group(0), passage_count)
    return uncited[::-1]


@dataclass(frozen=True)
class Attribution:
    text: str  # with a marker after every sentence a passage supports
    attributed: set[int]  # passage numbers (1-based) only Loupe's markers name
    unsupported: list[str]  # the sentences no passage supports, as written


# A sentence's closing punctuation: an added marker goes before it, as the model's would.
CLOSING_RE = re.compile(r"[.!?…:;]+[\"'”’)*_]*$")


def attribute_sentences(text: str, passages: list[str]) -> Attribution:
    """Give every sentence of a model's reply that names no passage the marker of the
    passage that best supports it, when the support check passes; the others are returned
    as unsupported. `text` is the reply as written, before map_markers; `passages[i]` is
    the text of passage i + 1."""
    placed = {
        number
        for match in MARKER_RE.finditer(text)
        for number in _numbers(match.group(1))
        if 1 <= number <= len(passages)
    }
    pieces, cursor = [], 0
    added: set[int] = set()
    unsupported = []
    for start, end in uncited_spans(text, len(passages)):
        sentence = text[start:end]
        supports = [best_support(sentence, passage) for passage in passages]
        best = max(range(len(supports)), key=lambda i: supports[i].score, default=None)
        if best is None or not supports[best].supported:
            unsupported.append(sentence)
            continue
        closing = CLOSING_RE.search(sentence)
        cut = start + (closing.start() if closing else len(sentence))
        pieces += [text[cursor:cut].rstrip(), f" [{best + 1}]"]
        cursor = cut
        added.add(best + 1)
    pieces.append(text[cursor:])
    return Attribution(text="".join(pieces), attributed=added - placed, unsupported=unsupported)


# Markers in a row ("[1][2]", "[1] [3]"): what one sentence cites at one place.
MARKER_RUN_RE = re.compile(MARKER_RE.pattern + r"(?:[ \t]*" + MARKER_RE.pattern + r")*")


@dataclass(frozen=True)
class Pointed:
    text: str
    placed: set[int]  # passage numbers Loupe's markers now name and the model's named nowhere


def supported_markers(text: str, passages: list[str]) -> Pointed:
    """Each run of markers kept to the passages that support the sentence it belongs to:
    "[1][2]" where passage 1 supports the sentence and 2 does not becomes "[1]"; where
    neither does but another passage does, that passage's marker (Loupe placed it); where
    no passage does, the run stays and is shown as unsupported. A small model writes
    "[1][2]" out of habit. Markers opening a sentence are the sentence
    before's, as verification reads them."""
    written = {number for match in MARKER_RE.finditer(text) for number in _numbers(match.group(1))}
    runs: list[tuple[int, int, str]] = []  # a run's span and the claim it belongs to
    previous = ""
    for start, end in claim_spans(text):
        opening = OPENING_MARKERS_RE.match(text, start, end)
        body = opening.end() if opening else start
        if opening and previous:
            runs.append((start, start + len(opening.group(0).rstrip()), previous))
        claim = MARKER_RE.sub("", text[body:end]).strip()
        if hollow(claim):
            continue
        runs += [(run.start(), run.end(), claim) for run in MARKER_RUN_RE.finditer(text, body, end)]
        previous = claim
    edits: list[tuple[int, int, str]] = []
    placed: set[int] = set()
    for start, end, claim in runs:
        named = [
            number
            for match in MARKER_RE.finditer(text, start, end)
            for number in _numbers(match.group(1))
            if 1 <= number <= len(passages)
        ]
        backing = [
            number for number in named if best_support(claim, passages[number - 1]).supported
        ]
        if not backing:
            supports = [best_support(claim, passage).score for passage in passages]
            best = max(range(len(passages)), key=lambda i: supports[i], default=None)
            if best is None or supports[best] < SUPPORT_THRESHOLD:
                continue  # nothing supports it: shown as it was written, unsupported
            backing = [best + 1]
            placed |= {best + 1} - written
        if backing != named:
            edits.append((start, end, "".join(f"[{n}]" for n in dict.fromkeys(backing))))
    for start, end, markers in reversed(edits):
        text = text[:start] + markers + text[end:]
    return Pointed(text=text, placed=placed)


def unsupported_sentences(message: Message) -> list[str]:
    """The sentences of a model's stored answer that carry no marker: after
    attribute_sentences, those no passage supports. Other answers quote their sources."""
    if message.mode != Message.Mode.LLM:
        return []
    count = len(message.citations.all())
    return [message.content[start:end] for start, end in uncited_spans(message.content, count)]


def announced_lines(claim: str, passage: str) -> str:
    """The commands or items that the sentence of `passage` holding `claim` announces ("…
    as the following.", "… wie folgt beheben:"), verbatim, as the extractive answerer brings
    them along (generation/extractive/neighbours.py): a list's items as a list; commands,
    with their output and the lines between them, or a setting, as a code block; "" when
    that sentence announces nothing, or nothing it could announce follows."""
    found = units(passage)
    claim_terms = set(terms(claim))
    if not found or not claim_terms:
        return ""
    shares = [len(claim_terms & set(terms(unit.text))) / len(claim_terms) for unit in found]
    best = max(range(len(found)), key=shares.__getitem__)
    if shares[best] < SUPPORT_THRESHOLD or not found[best].introduces_next:
        return ""
    candidates = [Candidate(unit=unit, passage=0, terms=frozenset()) for unit in found]
    brought = [found[at].text for at in introduced(candidates, best)]
    if any(BULLET_RE.match(text) for text in brought):  # a list's items, each a claim
        return "\n".join(f"- {BULLET_RE.sub('', text)}" for text in brought)
    # Commands, a transcript, a setting: as they stand, no marker in them.
    return "```\n" + "\n".join(brought) + "\n```" if brought else ""


def with_announced_lines(text: str, passages: list[str]) -> str:
    """A sentence of `text` that announces what it does not give ("You can limit it with
    the following setting. [1]", where passage 1 has the setting on the next line) is
    followed by what its passage announces there (announced_lines). A small model copies
    the announcing sentence of its passage and stops: the command the reader asked for is in
    the passage, one line below. `passages[i]` is the text of passage i + 1; markers as the
    model wrote them."""
    spans = claim_spans(text)
    for index in range(len(spans) - 1, -1, -1):
        start, end = spans[index]
        sentence = text[start:end]
        claim = MARKER_RE.sub("", sentence).strip()
        if not ANNOUNCING_RE.search(claim):
            continue
        # Markers after its full stop ("… following. [1]") are the sentence's.
        trailing = OPENING_MARKERS_RE.match(text, end)
        if trailing and not text[end : trailing.end()].count("\n"):
            sentence += text[end : trailing.end()]
            end = start + len(sentence.rstrip())
        after = text[end:].lstrip(" \t")
        if after.startswith("\n") and after.strip()[:1] in {"$", "`", "-", "*", "•"}:
            continue  # the answer goes on with what it announced
        named = [
            number
            for match in MARKER_RE.finditer(sentence)
            for number in _numbers(match.group(1))
            if 1 <= number <= len(passages)
        ]
        for number in named:
            block = announced_lines(claim, passages[number - 1])
            first = next((line for line in block.split("\n") if line.strip("`")), "")
            # A marker-like "[2]" in the lines would be taken for a citation.
            if block and first.removeprefix("- ") not in text and not MARKER_RE.search(block):
                text = f"{text[:end]}\n\n{block}\n\n{text[end:].lstrip()}".rstrip()
                break
    return text
