from __future__ import annotations

from django.utils.translation import gettext_noop

from language.tokens import estimate_tokens
from language.words import asks_yes_or_no
from library.languages import detect_language, language_name

# What the model is told to reply when the passages do not answer (generation/not_covered.py).
NOT_COVERED_SENTINEL = "NOT_IN_SOURCES"

SYSTEM_PROMPT = f"""You answer questions about the user's documents, using only the numbered \
passages you are given.

Rules:
- Use only facts stated in the passages. Do not add outside knowledge.
- Put a marker like [1] after every claim, naming the passage it comes from. Cite several \
passages as [1][3].
- Only use numbers of passages that exist. Never invent a marker.
- If the passages do not answer the question, reply with \
{NOT_COVERED_SENTINEL} and nothing else.
- Answer in the language of the question, concisely."""

# Repeated after the question: small models read the end of a long prompt best, and with
# the rule only in the system prompt, above thousands of tokens of passages, a 1.5B model
# placed no marker in 6 answers of 6. Asked for words first and the number after, as here:
# "put the passage's marker, e.g. [1], right after each claim" had Qwen2.5-Coder-1.5B
# answer "[1] [2]" and nothing else; with an example sentence it copied the example.
# Told that the sentences state facts and say nothing about the passages, it writes fewer
# sentences that only point ("Dies ist [1][2].") and more that a passage supports.
CITATION_REMINDER = (
    "Answer the question in one to three sentences of your own words that state the facts, "
    "using only the passages above. End each of those sentences with the number of the "
    "passage it comes from in square brackets. Write nothing about the passages themselves."
)


# Asked yes or no, the 1.5B model began with "Yes"/"Ja" for 11 of 11 questions whose
# passages say no ("Sollte ich meine Login-Shell mit chsh auf zsh umstellen?"); told to
# say first what the passages state, 6 of 14 answers said no (docs/retrieval.md).
YES_OR_NO_REMINDER = (
    "The question asks yes or no: first say what the passages state about it, then whether "
    "that means yes or no."
)


def citation_reminder(question: str, *, standalone: str = "") -> str:
    """CITATION_REMINDER, naming the question's language: read last, an English reminder
    has a small model answer a German question in English. With YES_OR_NO_REMINDER when
    the question, as it stands alone (`standalone`: a follow-up's rewrite), asks yes or no."""
    name = language_name(detect_language(question))
    yes_or_no = asks_yes_or_no(standalone or question)
    return (
        CITATION_REMINDER
        + (f" {YES_OR_NO_REMINDER}" if yes_or_no else "")
        + (f" Write the answer in {name}." if name else "")
    )


# The fixed replies are stored in the asker's language (answering.py translates them).
EMPTY_NOTEBOOK_REPLY = gettext_noop(
    "This notebook has no sources yet, so there is nothing to answer from. "
    "Add a document, wait until it is ready, then ask again."
)
NOTHING_READY_REPLY = gettext_noop(
    "None of this notebook's sources is ready yet. Wait until at least one is ready "
    "(or check why it failed), then ask again."
)
NO_MATCH_REPLY = gettext_noop(
    "No passage in this notebook's sources matches the question closely enough to "
    "answer it. Try asking with words the documents use."
)

# Said instead of an answer when the passages do not cover the question: Loupe's search
# judged so (retrieval/coverage.py), or the chat model replied NOT_IN_SOURCES; it names the
# closest passages (`places`), so the asker can look there or ask otherwise.
NOT_COVERED_REPLY = gettext_noop(
    "Your sources don't seem to cover this, so there is no answer to give from them. "
    "The closest passages are in %(places)s."
)


MEMORY_SECTION = """What the person asking told Loupe to remember about them and how to \
answer (their own words, not a source): let it shape what you explain and how, but take no \
fact from it for the answer, and never give it a [n] marker.
{facts}"""


def memory_section(facts: list[str]) -> str:
    """The asker's remembered facts (memory/), for the system prompt after the style."""
    return MEMORY_SECTION.format(facts="\n".join(f"- {fact}" for fact in facts))


def format_passage(number: int, title: str, page: int | None, text: str) -> str:
    where = f"{title}, page {page}" if page else title
    return f"[{number}] ({where})\n{text}\n"


def passages_that_fit(passages: list[tuple[str, int | None, str]], budget: int) -> int:
    """How many of `passages` (title, page, text), best first, fit `budget` tokens whole:
    a passage cut in half could lose the very sentence that answers."""
    used = 0
    for number, (title, page, text) in enumerate(passages, start=1):
        used += estimate_tokens(format_passage(number, title, page, text))
        if used > budget:
            return number - 1
    return len(passages)


# Titles the documents list names at most: a notebook of 50 sources would add ~500 tokens
# to every prompt, seven seconds of a 2-core CPU before a local model's first word, for a
# list the passages' own titles mostly repeat.
PROMPT_DOCUMENTS = 10


def build_user_prompt(
    *,
    question: str,
    documents: list[tuple[str, str]],
    passages: list[tuple[str, int | None, str]],
    standalone: str = "",
) -> str:
    """The documents list (kind, title; the first PROMPT_DOCUMENTS, then how many more) and
    the numbered passages (title, page, text); `standalone`: a follow-up rewritten to stand
    alone, for the reminder."""
    lines = ["Documents in this notebook:"]
    lines += [f"- {title} ({kind})" for kind, title in documents[:PROMPT_DOCUMENTS]]
    if len(documents) > PROMPT_DOCUMENTS:
        lines.append(f"- … and {len(documents) - PROMPT_DOCUMENTS} more")
    lines.append("")
    if passages:
        lines.append("Passages:")
        for number, (title, page, text) in enumerate(passages, start=1):
            lines.append(format_passage(number, title, page, text))
    else:
        lines.append("Passages: none matched the question.")
    lines.append(f"Question: {question}")
    if passages:
        lines += ["", citation_reminder(question, standalone=standalone)]
    return "\n".join(lines)
