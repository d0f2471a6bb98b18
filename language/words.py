"""Words, their stems and sentences, as every part of Loupe that weighs text counts them.

Ingest (a source's extractive summary), answering (extractive answers, the support check,
citations), the studio (quizzes, mind maps, audio scripts) and query rewriting all compare
texts by the same terms, so that a word one of them finds is a word the others find too.
"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"\w+")
SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+(?=[\"'“„(\[]?[\w])|\n\s*\n")
# The labels of note and tip boxes, on a line of their own in a page's text ("Note",
# "Tipp"): they name the box, they say nothing.
# fmt: off
ADMONITIONS = frozenset((
    "note", "tip", "caution", "warning", "important", "anmerkung", "hinweis", "tipp",
    "achtung", "warnung", "wichtig", "vorsicht",
))
# fmt: on
# Very common words carry no meaning for matching (English and German).
# fmt: off
STOPWORDS = frozenset((
        "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did",
        "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is",
        "it", "its", "may", "more", "most", "no", "not", "of", "on", "or", "our", "so", "such",
        "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
        "those", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom",
        "why", "will", "with", "would", "you", "your", "der", "die", "das", "den", "dem", "des",
        "ein", "eine", "einer", "eines", "einem", "einen", "und", "oder", "aber", "ist", "sind",
        "war", "waren", "wird", "werden", "wurde", "wurden", "hat", "haben", "hatte", "im",
        "ins", "am", "auf", "aus", "bei", "mit", "nach", "von", "vor", "zu", "zum", "zur", "für",
        "über", "unter", "um", "wie", "wer", "wo", "wann", "warum", "welche", "welcher",
        "welches", "es", "er", "sie", "wir", "ihr", "ich", "du", "nicht", "kein", "keine",
        "auch", "noch", "nur", "sich", "dass", "als",
))
# fmt: on
# The words that ask for something other than yes or no, in Loupe's interface languages,
# Czech and Russian; a question without one asks yes or no ("Should I switch my shell to
# zsh?").
# fmt: off
INTERROGATIVES = frozenset((
    # English
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
    # German
    "was", "welche", "welcher", "welches", "welchem", "welchen", "wer", "wen", "wem",
    "wessen", "wo", "wann", "warum", "wieso", "weshalb", "weswegen", "wie", "wozu", "woran",
    "worauf", "woraus", "wobei", "wodurch", "wofür", "wogegen", "woher", "wohin", "womit",
    "wonach", "worin", "worüber", "worum", "wovon", "wovor",
    # French
    "que", "qu", "quoi", "quel", "quelle", "quels", "quelles", "qui", "où", "quand",
    "pourquoi", "comment", "combien", "lequel", "laquelle", "lesquels", "lesquelles",
    # Spanish
    "qué", "cuál", "cuáles", "quién", "quiénes", "dónde", "adónde", "cuándo", "cómo",
    "cuánto", "cuánta", "cuántos", "cuántas",
    # Italian
    "che", "cosa", "chi", "quale", "quali", "dove", "quando", "perché", "come", "quanto",
    "quanta", "quanti", "quante",
    # Dutch
    "wat", "welke", "welk", "wie", "waar", "wanneer", "waarom", "hoe", "hoeveel", "waarmee",
    "waarvoor", "waardoor", "waaraan", "waarop", "waarin", "waarover",
    # Portuguese
    "quê", "qual", "quais", "quem", "onde", "porque", "porquê", "quanto", "quantos",
    "quantas",
    # Polish
    "co", "czego", "czym", "jaki", "jaka", "jakie", "jakiego", "który", "która", "które",
    "kto", "kogo", "gdzie", "kiedy", "dlaczego", "czemu", "jak", "ile",
    # Czech
    "jaký", "jaká", "jaké", "kdo", "kde", "kdy", "proč", "kolik",
    # Russian
    "что", "чем", "какой", "какая", "какое", "какие", "каких", "который", "которая",
    "кто", "кого", "где", "когда", "почему", "зачем", "как", "сколько", "чей", "куда",
    "откуда",
))
# fmt: on


def asks_yes_or_no(question: str) -> bool:
    """Whether the question's last sentence asks yes or no: it ends with a question mark
    and holds no interrogative ("Gehört in /etc/hostname der FQDN?"; not "Mein Rechner
    bootet langsam. Mit welchem Befehl …?"). Chinese, asked without spaces: no. In a
    language the list lacks, every question counts; the line it brings (prompts.py) asks
    first for what the passages state, which answers any question."""
    asked = question.strip()
    if not asked.endswith("?") or CJK_RE.search(asked):  # Chinese asks without spaces
        return False
    start = 0
    for stop in re.finditer(r"(?<=[.!?])\s+", asked):
        if ends_a_sentence(asked[start : stop.start()]):  # not after "z. B."
            start = stop.end()
    return not any(word.casefold() in INTERROGATIVES for word in WORD_RE.findall(asked[start:]))


# A piece ending in one of these did not end a sentence ("e.g. ", "z. B. ", "Abs. 3").
# fmt: off
ABBREVIATIONS = frozenset((
    "e.g", "i.e", "cf", "vs", "approx", "fig", "no", "sec", "z", "b", "d", "h", "u", "a",
    "z.b", "d.h", "u.a", "s.o", "s.u", "o.ä", "bzw", "vgl", "ca", "nr", "dr", "ggf", "evtl",
    "inkl", "abs", "bspw", "sog", "s",
))
# fmt: on
ABBREVIATION_RE = re.compile(r"(?:^|[\s(])([\w.]+)\.$")
LIST_NUMBER_RE = re.compile(r"(?:^|\n)[ \t]*\d{1,2}\.$")
STEM_CHARS = 5  # compare word beginnings so "vaccines" meets "vaccine", "Impfung" "Impfungen"


def stem(word: str) -> str:
    """The form in which two words count as the same term: the lower-cased word's first
    STEM_CHARS letters, whatever its language (docs/decisions.md, "Words stay stemmed")."""
    return word[:STEM_CHARS]


def terms(text: str) -> list[str]:
    """The stems of the text's words that are not stopwords, in order (a question's or a
    claim's terms: two letters are enough, "IP" and "5G" count)."""
    words = (word.lower() for word in WORD_RE.findall(text))
    return [stem(word) for word in words if word not in STOPWORDS and len(word) > 1]


# A number of one digit, which `terms` leaves out with every one-character word: a question
# naming one ("record number 5", "step 3") asks for the row or the sentence holding it.
LONE_DIGIT_RE = re.compile(r"(?<![\w.,])\d(?!\w|[.,]\d)")


def terms_and_digits(text: str) -> list[str]:
    """`terms`, and the numbers of one digit that it leaves out: what a question asks for
    when a passage's part is chosen to answer it."""
    return [*terms(text), *LONE_DIGIT_RE.findall(text)]


def content_terms(text: str) -> list[str]:
    """The stems of the text's words that say what it is about: no stopwords, nothing
    shorter than three letters (a summary's or a quiz answer's terms)."""
    words = (word.lower() for word in WORD_RE.findall(text))
    return [stem(word) for word in words if word not in STOPWORDS and len(word) > 2]


def split_sentences(text: str) -> list[str]:
    """The text's sentences, lines broken inside a sentence joined; a blank line ends one."""
    # Lines are stripped first, in linear time: a regex around the line breaks, such as
    # [ \t]*\n[ \t]*(?!\n), would rescan a run of spaces from each of its characters, and
    # a file padded with a megabyte of them would take minutes.
    stripped = "\n".join(line.strip(" \t") for line in text.split("\n"))
    flat = re.sub(r"\n(?!\n)", " ", stripped)
    pieces = (piece.strip() for piece in SENTENCE_END_RE.split(flat))
    return [piece for piece in pieces if piece and WORD_RE.search(piece)]


def head(passages: list[str], *, words: int) -> str:
    """The text of the passages, in order, up to the end of the `words`-th word."""
    pieces: list[str] = []
    left = words
    for passage in passages:
        matches = list(WORD_RE.finditer(passage))
        if not matches:
            continue
        if len(matches) > left:
            pieces.append(passage[: matches[left - 1].end()])
            break
        pieces.append(passage)
        left -= len(matches)
        if not left:
            break
    return "\n\n".join(piece.strip() for piece in pieces)


def ends_a_sentence(piece: str) -> bool:
    """Whether the stop that ends `piece` ends a sentence: not when it closes an
    abbreviation ("e.g.", "z. B."), an initial ("Ivan E. Moore") or the number of a list
    item on a line of its own ("…\n2. Install …")."""
    if LIST_NUMBER_RE.search(piece):
        return False
    found = ABBREVIATION_RE.search(piece)
    if found is None:
        return True
    word = found.group(1)
    return word.casefold() not in ABBREVIATIONS and not (len(word) == 1 and word.isupper())


# Chinese, Japanese and Korean characters (the ranges, for a regex or a grammar's class): a
# small multilingual model (Qwen) slips into them mid-sentence ("the package管理").
CJK_RANGES = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK_RE = re.compile(f"[{CJK_RANGES}]")
