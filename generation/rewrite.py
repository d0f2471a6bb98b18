"""Query rewriting: a follow-up question made into a standalone search query.

"And what did it cost?" finds little by itself: the words that matter are in the turns
before it. With RETRIEVAL_QUERY_REWRITE on and a chat model configured, one cheap call
(temperature 0, a few dozen tokens) rewrites such a question from the last few turns; the
search embeds and full-text-matches the rewrite, while the answer's prompt still gets the
person's own question and the turns. The call is metered like every chat call.

A rewrite may improve a search, never fail an answer: an error, an empty reply or one that
is no query (cut off at the token limit, far too long) falls back to the question as asked,
with a warning in the log. So does a rewrite that would derail the search (`derailed`): one
sharing no content word with the conversation, much shorter or longer than a question, or
an address or identifier the question did not contain. A small model (Qwen2.5 1.5B) turned
a follow-up into the bare e-mail address of the previous answer, and the search looked
for that.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User

from language.words import terms
from providers.chat import chat, chat_available
from providers.errors import ProviderError

Turn = tuple[str, str]  # (role, text)

logger = logging.getLogger(__name__)

# The last three exchanges: what a follow-up points back to is almost always among them.
REWRITE_TURNS = 6
# Of each turn: an answer's opening names its subject; its whole length would only cost.
TURN_CHARS = 1200
# A search query, not an answer: a reply cut off here was not a query.
MAX_TOKENS = 80
# For servers that ignore max_tokens.
MAX_QUERY_CHARS = 500

SYSTEM_PROMPT = """You turn the last question of a conversation into a search query for a \
document search that cannot see the conversation.

Rules:
- Replace every reference to earlier turns (it, they, this, that study, the second one, \
the same for X) with what it refers to, using the conversation.
- Keep the question's own words, names and numbers; add no facts and do not answer.
- If the question already stands alone, repeat it unchanged.
- Write in the language of the question.
- Reply with the query only, on one line."""

# Worked examples, given as earlier exchanges before the conversation to rewrite: told the
# rules alone, a 1.5B model (Qwen2.5-Coder) answered 11 of 20 follow-ups instead of
# rewriting them ("Ctrl-Alt-F7", "journalctl -b", a bug address it made up), which the
# checks below discarded; shown these, it rewrote 19 of 20 (docs/retrieval.md, "Follow-up
# questions and query rewriting"). About nothing any notebook holds, one in German for
# questions asked in German; the same every time, so the model server keeps them read.
EXAMPLES: tuple[tuple[tuple[Turn, ...], str, str], ...] = (
    (
        (
            ("user", "When does the town library open on Saturdays?"),
            ("assistant", "It opens at nine on Saturdays."),
        ),
        "And when does it close?",
        "When does the town library close on Saturdays?",
    ),
    (
        (
            ("user", "Wie installiere ich den Druckertreiber?"),
            ("assistant", "Starten Sie das Installationsprogramm und wählen Sie Ihr Modell."),
        ),
        "Und wenn es nach einem Passwort fragt?",
        "Was tun, wenn das Installationsprogramm des Druckertreibers nach einem Passwort fragt?",
    ),
    (
        (
            ("user", "Who wrote the report on river pollution?"),
            ("assistant", "Dr. Meyer wrote it in 2019."),
        ),
        "What did she recommend?",
        "What did Dr. Meyer recommend in the report on river pollution?",
    ),
)

# Bounds on a query in words: a question is rarely shorter, and a rewrite that only
# resolves references rarely needs to be much longer than the question.
MIN_QUERY_WORDS = 2
MAX_QUERY_WORDS = 40
ADDRESS_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.I)
LETTER_WORD_RE = re.compile(r"[^\W\d_]{2,}")

MARKER_RE = re.compile(r"\s*\[\d+\]")
# A label some models put before the query despite the rules ("Query: …").
LABEL_RE = re.compile(r"^(?:standalone\s+|search\s+|rewritten\s+)?(?:query|question)\s*:\s*", re.I)
WORD_RE = re.compile(r"\w")


def rewrite_enabled() -> bool:
    """RETRIEVAL_QUERY_REWRITE is on and there is a chat model to do it (extractive mode
    has none: its questions are searched as asked)."""
    return settings.RETRIEVAL_QUERY_REWRITE == "on" and chat_available()


def standalone_query(*, question: str, turns: Sequence[Turn], user: User | None) -> str:
    """The query to search for `question`, given the conversation's earlier `turns`
    ((role, text), oldest first): the question rewritten to stand alone when rewriting is
    enabled and there are turns, else (or when the rewrite fails) the question itself."""
    if not turns or not rewrite_enabled():
        return question
    return rewrite_query(question=question, turns=turns, user=user).query


@dataclass(frozen=True)
class Rewrite:
    query: str  # the question itself when the rewrite failed
    failure: str | None = None  # why it failed


def rewrite_query(*, question: str, turns: Sequence[Turn], user: User | None) -> Rewrite:
    """One chat call rewriting `question` to stand alone, whatever the setting says
    (`manage.py evaluate --followups` measures both); a failure falls back to the question
    and is logged. Needs a chat model."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for example_turns, example_question, example_query in EXAMPLES:
        messages += [
            {
                "role": "user",
                "content": build_prompt(question=example_question, turns=example_turns),
            },
            {"role": "assistant", "content": example_query},
        ]
    messages.append({"role": "user", "content": build_prompt(question=question, turns=turns)})
    try:
        reply = chat(messages, user=user, temperature=0.0, max_tokens=MAX_TOKENS)
    except ProviderError as exc:
        logger.warning("query rewrite failed, searching the question as asked: %s", exc)
        return Rewrite(query=question, failure=str(exc))
    query = clean(reply.text)
    failure = None
    if reply.finish_reason == "length":
        failure = f"cut off at {MAX_TOKENS} tokens"
    elif not WORD_RE.search(query):
        failure = "no words"
    elif len(query) > MAX_QUERY_CHARS:
        failure = f"longer than {MAX_QUERY_CHARS} characters"
    else:
        failure = derailed(query, question=question, turns=turns)
    if failure is not None:
        logger.warning(
            "query rewrite unusable (%s), searching the question as asked: %r",
            failure,
            reply.text[:200],
        )
        return Rewrite(query=question, failure=failure)
    return Rewrite(query=query)


def derailed(query: str, *, question: str, turns: Sequence[Turn]) -> str | None:
    """Why searching `query` instead of `question` would lead the search astray, or None."""
    addresses = [found for found in ADDRESS_RE.findall(query) if found not in question]
    if addresses:
        return f"an address or identifier the question does not contain ({addresses[0]})"
    words = LETTER_WORD_RE.findall(query)
    if len(words) < MIN_QUERY_WORDS:
        return "much shorter than a question"
    limit = max(MAX_QUERY_WORDS, 2 * len(LETTER_WORD_RE.findall(question)))
    if len(words) > limit:
        return f"much longer than a question ({len(words)} words)"
    pieces = query.split()
    if sum(1 for piece in pieces if LETTER_WORD_RE.fullmatch(piece.strip(".,;:!?\"'()"))) < (
        len(pieces) / 2
    ):
        return "looks like an identifier, not a question"
    said = set(terms(question)).union(*(terms(text) for _, text in turns))
    if not set(terms(query)) & said:
        return "shares no content word with the conversation"
    return None


def build_prompt(*, question: str, turns: Sequence[Turn]) -> str:
    """The last REWRITE_TURNS turns, each clipped, without citation markers (they mean
    nothing without the passages), then the question."""
    lines = ["Conversation:"]
    for role, text in turns[-REWRITE_TURNS:]:
        text = " ".join(MARKER_RE.sub("", text).split())
        if len(text) > TURN_CHARS:
            text = text[:TURN_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"{'User' if role == 'user' else 'Assistant'}: {text}")
    lines += ["", f"Last question: {question}", "", "Search query:"]
    return "\n".join(lines)


def clean(reply: str) -> str:
    """The first non-empty line of the reply, without a label, quotes or extra spaces."""
    line = next((line for line in reply.splitlines() if line.strip()), "")
    line = LABEL_RE.sub("", line.strip())
    line = line.strip().strip("`\"'“”„«»").strip()
    return " ".join(line.split())
