"""The offline answerer: the retrieved sentences that best answer the question, each cited.

No language model runs here; the answer is made of the documents' own sentences. It is
labelled "extractive" wherever it is shown, so nobody mistakes it for a generated answer.

What it quotes are the passages' units (generation/passage_units.py): sentences, table rows
and commands, never a heading, a caption, a table's header row or a contents line. A unit
is chosen for the question words it holds (rarer ones count more), for its passage's rank,
for its section's title sharing the question's words and for how close in meaning the part
of the passage it sits in is to the question (the search's part vectors, when known). A
manual's own questions ("How do I …?") are not answers, but lend their match to the
sentence after them; sentences about the document ("This chapter describes …") and the
cut-off ends of sentences begun before the passage are not quoted. Words are compared with
a plural's "s" dropped, and a unit holding no word beyond the question's restates it and
weighs less. A chosen sentence brings the one before it when it leans on it ("This …",
"Es …"), and a sentence ending in ":" or "the following." brings the commands or items it
introduces, wherever it is chosen; the best one also brings the next sentence of its
paragraph (not a lead-in the passage cuts off). Consecutive chunks of a page share some
fifty tokens, so a unit another passage holds whole is quoted once. The answer goes by
stretch of text (a document's same page, or the next page of the same section), the best
first, each in reading order, commands on lines of their own, and of a run of table rows
only the stretch around the question's words.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from generation.extractive_weights import (
    CHARS_PER_SENTENCE,
    CLOSENESS_WEIGHT,
    MAX_CODE_LINES,
    MAX_INTRODUCED,
    MAX_ITEM_CHARS,
    MAX_LISTED_CHARS,
    MAX_SENTENCE_CHARS,
    MAX_SENTENCES,
    MIN_NEW_TERMS,
    MIN_SCORED_TERMS,
    QUESTION_LEND,
    RANK_WEIGHT,
    RELATIVE_FLOOR,
    RESTATING_SHARE,
    SECTION_WEIGHT,
)
from generation.passage_units import BULLET_RE, CLOSING_RE, Unit, units
from language.words import STOPWORDS, WORD_RE, terms

# How people phrase questions, not what they ask about (beside language.words.STOPWORDS).
# fmt: off
QUESTION_WORDS = frozenset((
    "can", "do", "i'm", "me", "my", "mine", "get", "gets", "need", "want", "should", "way",
    "many", "much", "all", "any", "every", "up", "out", "tell", "someone",
    "something", "anything", "there", "kann", "können", "kannst", "muss", "soll", "sollte",
    "alle", "jeden", "einfach", "gar",
    "mich", "mir", "mein", "meine", "meinen", "meinem", "meiner", "man", "ob", "wenn",
    "ohne", "beim", "lasse", "bekomme", "komme", "kommt", "mache", "gibt", "welchem",
    "welchen",
))
# fmt: on
# A question about the document itself may be answered by what it says of itself.
ASKS_ABOUT_DOCUMENT_RE = re.compile(
    r"\b(?:document|manual|chapter|section|guide|book|dokument|handbuch|kapitel|abschnitt"
    r"|anleitung|buch)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Passage:
    """A retrieved passage as the answerer reads it; passages come best-ranked first."""

    text: str
    section: tuple[str, ...] = ()  # its section path, outermost first
    # Where it sits, so that one document's sentences come in reading order: the
    # document's id, the page and the passage's first character on it.
    document: int = 0
    page: int = 0
    start: int = 0
    # A note or generated document made a source: it restates other sources, so where it
    # copies one of their sentences the original is quoted (and cited) instead.
    restates: bool = False
    # The question's similarity to each consecutive part of `part_words` words of the
    # text (the search's windows, retrieval/windows.py), or to the whole text when there is
    # one value; empty: not known (the units are scored by their words alone).
    closeness: tuple[float, ...] = ()
    part_words: int = 80


@dataclass(frozen=True)
class _Candidate:
    unit: Unit
    passage: int  # 0-based index into the passages
    terms: frozenset[str]
    closeness: float | None = None


def _terms(text: str) -> list[str]:
    """The text's terms (language.words), a plural's "s" dropped first: a stem is a word's
    first five letters, so "file" and "files", "key" and "keys" would not meet."""
    return terms(" ".join(_singular(word) for word in WORD_RE.findall(text)))


def _singular(word: str) -> str:
    lowered = word.casefold()
    plural = len(lowered) > 3 and lowered.endswith("s") and lowered[-2] not in "su'’"
    return word[:-1] if plural and lowered not in STOPWORDS else word


def _key(text: str) -> str:
    return " ".join(WORD_RE.findall(text.casefold()))


def _candidates(passages: list[Passage]) -> list[_Candidate]:
    """Every passage's units, without those another passage holds whole (the overlap of
    consecutive chunks, or a cut-off copy of a sentence another chunk holds complete): the
    copy a better-ranked passage holds as a unit of its own is kept, else the longer one;
    an upload's copy goes before a restating passage's, whatever their ranks. Only a copy
    on the same page (where consecutive chunks overlap) or in a restating passage counts: a
    short command ("$ debuild") another page happens to hold is no copy, and dropping it
    would break its list."""
    found = [
        (number, unit, _key(unit.text), closeness)
        for number, passage in enumerate(passages)
        for unit, closeness in _with_closeness(
            passage,
            units(passage.text, section=passage.section, starts_mid_text=passage.start > 0),
        )
    ]
    keys: list[set[str]] = [set() for _ in passages]
    for number, _, key, _closeness in found:
        keys[number].add(key)
    order = [(passage.restates, number) for number, passage in enumerate(passages)]

    def copied(number: int, key: str, other: int) -> bool:
        if other == number or not _may_copy(passages[number], passages[other]):
            return False
        if key in keys[other]:
            return order[other] < order[number]
        return any(len(held) > len(key) and _cut_from(key, held) for held in keys[other])

    return [
        _Candidate(unit, number, frozenset(_terms(unit.text)), closeness)
        for number, unit, key, closeness in found
        if key and not any(copied(number, key, other) for other in range(len(passages)))
    ]


def _cut_from(key: str, held: str) -> bool:
    """`key` is the start or the end of the sentence `held`, cut by a chunk's edge."""
    return held.startswith(f"{key} ") or held.endswith(f" {key}")


def _may_copy(one: Passage, other: Passage) -> bool:
    same_page = one.document == other.document and one.page == other.page
    return same_page or one.restates or other.restates


def _with_closeness(passage: Passage, found: list[Unit]) -> list[tuple[Unit, float | None]]:
    """Each unit with the closeness of the part of the passage it begins in."""
    if not passage.closeness:
        return [(unit, None) for unit in found]
    if len(passage.closeness) == 1:
        return [(unit, passage.closeness[0]) for unit in found]
    words = passage.text.split()
    result: list[tuple[Unit, float | None]] = []
    cursor = 0
    for unit in found:
        opening = unit.text.split()[:3]
        for at in range(cursor, len(words)):
            if words[at : at + len(opening)] == opening:
                cursor = at
                break
        part = min(cursor // passage.part_words, len(passage.closeness) - 1)
        result.append((unit, passage.closeness[part]))
    return result


def _quotable(candidate: _Candidate, *, about_document: bool = False) -> bool:
    unit = candidate.unit
    return not (
        unit.question or unit.fragment or unit.label or (unit.about_document and not about_document)
    )


def answer(question: str, passages: list[Passage], *, limit: int = MAX_SENTENCES) -> str:
    """Up to `limit` chosen sentences (three unless the notebook's chat length says
    otherwise, generation/chat_style.py) with the neighbours they need; each ends with the
    [n] of the passage it came from."""
    candidates = _candidates(passages)
    if not candidates:
        return ""
    scores = _scores(question, candidates, passages)
    about_document = bool(ASKS_ABOUT_DOCUMENT_RE.search(question))
    ranked = sorted(
        (
            i
            for i, c in enumerate(candidates)
            if scores[i] > 0 and _quotable(c, about_document=about_document)
        ),
        key=lambda i: scores[i],
        reverse=True,
    )
    if not ranked:
        # No unit shares a word with the question: quote the best passage's opening.
        ranked = [i for i, c in enumerate(candidates) if c.passage == 0 and _quotable(c)][:2]
        scores = [1.0] * len(candidates)
    chosen: set[int] = set()
    budget = CHARS_PER_SENTENCE * limit
    picked = 0
    picks: list[int] = []  # the units chosen for themselves, best first
    for index in ranked:
        if picked >= limit or scores[index] < RELATIVE_FLOOR * scores[ranked[0]]:
            break
        if index in chosen:
            continue
        picks.append(index)
        group = _with_neighbours(candidates, index, follower=not picked and limit > 1)
        picked += 1 + sum(i not in chosen and _follows(candidates, index, i) for i in group)
        chosen.update(group)
        if sum(_shown_length(candidates[i].unit) for i in chosen) >= budget:
            break
    order = _in_reading_order(candidates, passages, chosen, picks)
    return _render(candidates, order, _question_terms(question))


def _question_terms(question: str) -> set[str]:
    """The question's terms, without the words of how people ask (QUESTION_WORDS)."""
    asked = (word for word in WORD_RE.findall(question) if word.casefold() not in QUESTION_WORDS)
    return set(_terms(" ".join(asked)))


def _scores(question: str, candidates: list[_Candidate], passages: list[Passage]) -> list[float]:
    """How well each candidate answers the question (0: it shares no word with it)."""
    question_terms = _question_terms(question)
    # Inverse document frequency over the retrieved units: a question word that appears
    # everywhere in them says less than one found in a single unit.
    frequency = {term: sum(term in c.terms for c in candidates) for term in question_terms}
    idf = {term: math.log(1 + len(candidates) / (1 + n)) for term, n in frequency.items()}
    weight = sum(idf.values()) or 1.0
    section_share = [
        sum(idf[term] for term in question_terms & set(_terms(" ".join(p.section[-2:])))) / weight
        for p in passages
    ]

    known = [c.closeness for c in candidates if c.closeness is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)

    def score(candidate: _Candidate) -> float:
        lexical = sum(idf[term] for term in question_terms & candidate.terms)
        if not lexical:
            return 0.0
        close = (
            (candidate.closeness - low) / (high - low)
            if candidate.closeness is not None and high > low
            else 0.0
        )
        total = (
            lexical / math.sqrt(max(len(candidate.terms), MIN_SCORED_TERMS) + 4)
            + RANK_WEIGHT / (candidate.passage + 1)
            + SECTION_WEIGHT * section_share[candidate.passage]
            + CLOSENESS_WEIGHT * close
        )
        told = len(candidate.terms - question_terms)
        return total * RESTATING_SHARE if told < MIN_NEW_TERMS else total

    scores = [score(candidate) for candidate in candidates]
    # The manual's own question is not an answer; the sentence after it likely is.
    for index, candidate in enumerate(candidates[:-1]):
        following = candidates[index + 1]
        if candidate.unit.question and following.passage == candidate.passage:
            scores[index + 1] = max(scores[index + 1], QUESTION_LEND * scores[index])

    return scores


def _follows(candidates: list[_Candidate], index: int, other: int) -> bool:
    """`other` is the prose sentence right after the one at `index` (not one it needs)."""
    return (
        other == index + 1
        and not candidates[other].unit.code
        and not (candidates[index].unit.introduces_next)
    )


def _with_neighbours(candidates: list[_Candidate], index: int, *, follower: bool) -> list[int]:
    """The unit at `index` with the sentence it leans on and the units it introduces; with
    `follower` (the best one) also the next sentence of its paragraph, with what that one
    introduces: a manual's sentence naming the question's topic is often followed by the
    answer ("… cause errors such as 'BADSIG'." "You should remove all cached data …")."""
    group = [index]
    unit = candidates[index].unit
    if _is_item(unit) and not unit.code:
        # An item of a list comes with the sentence introducing it and the other items.
        for at in range(index - 1, index - 1 - MAX_INTRODUCED, -1):
            lead = _neighbour(candidates, index, at)
            if lead is None or not (lead.unit.introduces_next or _is_item(lead.unit)):
                break
            if lead.unit.introduces_next:
                listed = _with_neighbours(candidates, at, follower=False)
                return listed if index in listed else [*listed, index]
    before = _neighbour(candidates, index, index - 1)
    if (
        before is not None
        and not before.unit.fragment
        and not before.unit.code
        # A command's lead-in says what it does, whether or not it ends in ":".
        and (unit.depends_on_previous or unit.code)
    ):
        group.insert(0, index - 1)
    introduced = _introduced(candidates, index)
    after = _neighbour(candidates, index, index + 1)
    if introduced:
        group += introduced
    elif (
        follower
        and after is not None
        and after.unit.paragraph == unit.paragraph
        and _quotable(after)
        and not _dangling(candidates, index + 1)
    ):
        group += [index + 1, *_introduced(candidates, index + 1)]
    return group


def _neighbour(candidates: list[_Candidate], index: int, at: int) -> _Candidate | None:
    """The unit at `at` when it sits right beside the one at `index` in its passage."""
    if not 0 <= at < len(candidates):
        return None
    here, there = candidates[index], candidates[at]
    beside = there.unit.position - here.unit.position == at - index
    return there if there.passage == here.passage and beside else None


def _introduced(candidates: list[_Candidate], index: int) -> list[int]:
    """What the unit at `index` comes with: the commands right after it (all of a list of
    commands, the first of a transcript: a command with its output), or the items of the
    list it introduces ("… as follows:")."""
    found: list[int] = []
    following = _neighbour(candidates, index, index + 1)
    if following is not None and following.unit.code:
        for at in range(index + 1, index + 1 + MAX_INTRODUCED):
            command = _neighbour(candidates, index, at)
            if command is None or not command.unit.code:
                break
            found.append(at)
            if "\n" in command.unit.text:
                break
    elif candidates[index].unit.introduces_next:
        for at in range(index + 1, index + 1 + MAX_INTRODUCED):
            item = _neighbour(candidates, index, at)
            # A table's rows the page run together are no item to read.
            if item is None or not _is_item(item.unit) or len(item.unit.text) > MAX_LISTED_CHARS:
                break
            found.append(at)
    return found


def _dangling(candidates: list[_Candidate], index: int) -> bool:
    """A sentence announcing what follows ("… as follows:") at the end of its passage: what
    it announces is not there, so it is not brought along (chosen for its own words, as
    "… with 10 open reading frames (ORFs):", it is quoted)."""
    return candidates[index].unit.introduces_next and (
        _neighbour(candidates, index, index + 1) is None
    )


def _shown_length(unit: Unit) -> int:
    """The characters the answer shows of the unit (a command's first lines only)."""
    if unit.code:
        return len("\n".join(unit.text.split("\n")[:MAX_CODE_LINES]))
    return min(len(unit.text), MAX_SENTENCE_CHARS)


def _is_item(unit: Unit) -> bool:
    """A command, a list item or a row, not the sentence after a list nor a pointer
    elsewhere ("See Section 7.7") the list happens to end with."""
    if unit.question or unit.introduces_next or unit.about_document:
        return False
    sentence = unit.text.endswith((".", "!")) and len(unit.text) > MAX_ITEM_CHARS / 2
    return unit.code or bool(BULLET_RE.match(unit.text)) or not sentence


def _in_reading_order(
    candidates: list[_Candidate], passages: list[Passage], chosen: set[int], picks: list[int]
) -> list[int]:
    """The chosen units by stretch of text (one document's passages on the same page, or on
    the next page in the same section), the stretch of the best pick first; within a stretch
    in reading order. A sentence of the page before, from another section, does not come
    before the best one."""

    def place_of(index: int) -> tuple[int, int, tuple[str, ...]]:
        passage = passages[candidates[index].passage]
        return (passage.document, passage.page, passage.section)

    places = sorted({place_of(i) for i in chosen})
    stretch: dict[tuple[int, int, tuple[str, ...]], int] = {}
    for number, (document, page, section) in enumerate(places):
        previous = places[number - 1] if number else None
        joined = (
            previous is not None
            and previous[0] == document
            and (page == previous[1] or (page - previous[1] == 1 and section == previous[2]))
        )
        stretch[(document, page, section)] = stretch[previous] if joined and previous else number

    def stretch_of(index: int) -> int:
        return stretch[place_of(index)]

    first_pick: dict[int, int] = {}
    for rank, index in enumerate(picks):
        first_pick.setdefault(stretch_of(index), rank)

    def place(index: int) -> tuple[int, ...]:
        candidate = candidates[index]
        passage = passages[candidate.passage]
        return (
            first_pick[stretch_of(index)],
            passage.page,
            passage.start,
            candidate.passage,
            candidate.unit.position,
        )

    return sorted(chosen, key=place)


def _render(candidates: list[_Candidate], chosen: list[int], question_terms: set[str]) -> str:
    """Prose joined by spaces, each command block on lines of its own; a marker after each
    sentence, and after a block no sentence of its passage introduces. Of a long run of
    table rows (no closing stop, and not a sentence the passage cuts off) only the stretch
    around the question's words is shown."""
    parts: list[str] = []
    previous: _Candidate | None = None
    listing = False  # the previous unit is a lead-in or an item of its list
    quoted: set[str] = set()
    for index in chosen:
        candidate = candidates[index]
        unit, marker = candidate.unit, f"[{candidate.passage + 1}]"
        if _key(unit.text) in quoted:
            continue  # the same line twice on a page ("APT::Periodic::… ”1”;")
        quoted.add(_key(unit.text))
        follows = (
            previous is not None
            and previous.passage == candidate.passage
            and previous.unit.position == unit.position - 1
        )
        if not unit.code and follows and listing and len(unit.text) <= MAX_ITEM_CHARS:
            # An item of the list the sentence before introduced: a line of its own, cited
            # by that sentence's marker.
            parts.append(f"\n{_balanced(unit.text)}\n")
            previous = candidate
            continue
        listing = unit.introduces_next
        if unit.code:
            lines = unit.text.split("\n")
            text = "\n".join(lines[:MAX_CODE_LINES] + ["…"] * (len(lines) > MAX_CODE_LINES))
            introduced = (
                previous is not None
                and previous.passage == candidate.passage
                and previous.unit.position in (unit.position - 1, unit.position - 2)
            )
            parts.append("\n" + (text if introduced else f"{text} {marker}") + "\n")
        else:
            rows = not unit.cut_off and not CLOSING_RE.search(unit.text)
            if rows and len(unit.text) > MAX_ITEM_CHARS:
                text = _excerpt(unit.text, question_terms)
            else:
                text = _balanced(unit.text)[:MAX_SENTENCE_CHARS]
                if unit.cut_off or len(unit.text) > MAX_SENTENCE_CHARS:
                    text += " …"
            parts.append(f"{text} {marker} ")
        previous = candidate
    return re.sub(r" *\n+ *", "\n", "".join(parts)).strip()


def _excerpt(text: str, question_terms: set[str], width: int = MAX_ITEM_CHARS) -> str:
    """The stretch of at most `width` characters (whole words) holding most of the question's
    words, "…" where it cuts: table rows a page ran together have no sentence to end at."""
    words = list(re.finditer(r"\S+", text))
    matched = [bool(question_terms & set(_terms(word.group()))) for word in words]
    best = (0, 0, 0)  # matches, first word, last word
    last = 0
    for first in range(len(words)):
        last = max(last, first)
        while last + 1 < len(words) and words[last + 1].end() - words[first].start() <= width:
            last += 1
        found = sum(matched[first : last + 1])
        if found > best[0]:
            best = (found, first, last)
    _, first, last = best
    # Around the matched words, the rest of the width shared between both sides.
    hits = [at for at in range(first, last + 1) if matched[at]] or [first]
    first, last = hits[0], hits[-1]
    grown = True
    while grown:
        grown = False
        for left, right in ((first - 1, last), (first, last + 1)):
            inside = left >= 0 and right < len(words)
            if inside and words[right].end() - words[left].start() <= width:
                first, last, grown = left, right, True
    shown = text[words[first].start() : words[last].end()]
    opening = "… " if first > 0 else ""
    ending = " …" if last < len(words) - 1 else ""
    return f"{opening}{shown}{ending}"


def _balanced(text: str) -> str:
    """Without the bracket a sentence split from the rest of its parenthesis kept:
    "(However, … filesystem." and "See Section 1.2.2.)"."""
    if text.startswith("(") and ")" not in text:
        text = text[1:]
    if text.endswith(")") and "(" not in text:
        text = text[:-1]
    elif text.endswith(".)") and "(" not in text:
        text = text[:-2] + "."
    return text
