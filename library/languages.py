"""A source's language, detected offline, and the PostgreSQL text search configuration
that stems its words (and a question's, when searching it)."""

from __future__ import annotations

import re
import threading

from django.conf import settings

# ISO 639-1 code → a configuration PostgreSQL has shipped since version 13, so an external
# server of any supported version has it. Any other language gets "simple": lower-cased
# words without stemming or stop words, which still matches exact words.
SEARCH_CONFIGS = {
    "ar": "arabic",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hu": "hungarian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nl": "dutch",
    "no": "norwegian",
    "nb": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}
SIMPLE_CONFIG = "simple"

# Enough text to tell a language apart; more only costs time.
# The languages Loupe writes in when asked (ISO 639-1 → the name a prompt uses).
LANGUAGE_NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
}

# Django's table of languages names most others; "zh" it names only as its two scripts.
OTHER_LANGUAGE_NAMES = {"zh": "Chinese"}


def language_name(code: str) -> str:
    """The English name of a language (ISO 639-1) that a prompt can ask an answer in:
    Loupe's own languages, then those Django's locale table names; "" when unknown
    ("sn", Shona, which py3langid hears in "What does Chikungunya cause?")."""
    from django.conf.locale import LANG_INFO

    return (
        LANGUAGE_NAMES.get(code)
        or OTHER_LANGUAGE_NAMES.get(code)
        or str(LANG_INFO.get(code, {}).get("name", ""))
    )


SAMPLE_CHARS = 20_000
MIN_WORDS = 3
WORD_RE = re.compile(r"\w+")

# py3langid keeps one identifier per process; classify it under a lock (threads of a worker).
_lock = threading.Lock()


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the text's language, or "" when there is too little to tell."""
    sample = text[:SAMPLE_CHARS]
    if len(WORD_RE.findall(sample[:1000])) < MIN_WORDS:
        return ""
    # py3langid ships its model inside the wheel: no download, works offline.
    import py3langid

    with _lock:
        code, _score = py3langid.classify(sample)
    return str(code)


def reader_language(text: str, *, given: str = "") -> str:
    """The interface language (settings.LANGUAGES) to answer `text` in where no reader's
    preference is known (a command): `given` when the pages speak it, else the text's own
    language when they speak that, else LANGUAGE_CODE. A refusal, or any text the answer
    path translates, is then in the question's language."""
    spoken = {code for code, _name in settings.LANGUAGES}
    for code in (given, detect_language(text)):
        if code in spoken:
            return code
    return str(settings.LANGUAGE_CODE)


def search_config(language: str) -> str:
    return SEARCH_CONFIGS.get(language, SIMPLE_CONFIG)
