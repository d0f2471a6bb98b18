"""A quiz: multiple-choice and short-answer questions, each with an explanation that cites
the passage holding its answer. Answers are checked on the server (check_answer); the page
never receives them before the person has answered."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.markers import require_markers
from generation.documents.pieces import ONE_PASSAGE, Piece, cited, joined
from generation.documents.structured import InvalidOutput
from language.words import content_terms
from texts.errors import UserFacingError

FOCUS = "key facts, definitions, figures and conclusions worth remembering"
QUESTIONS = 8
# A short answer is right when it holds this share of the expected answer's content words
# (compared by their stems, language/words.py, as the extractive answerer does).
SHORT_ANSWER_SHARE = 0.6

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "questions": {
            "type": "array",
            "minItems": 1,
            "maxItems": 20,
            "items": {
                "type": "object",
                "properties": {
                    "type": {"enum": ["multiple_choice", "short_answer"]},
                    "question": {"type": "string", "minLength": 1},
                    "options": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "answer_index": {"type": "integer", "minimum": 0},
                    "answer": {"type": "string"},
                    "explanation": {"type": "string", "minLength": 1},
                },
                "required": ["type", "question", "explanation"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title", "questions"],
    "additionalProperties": False,
}

INSTRUCTIONS = f"""You write a quiz of about {QUESTIONS} questions on the user's documents, \
using only the numbered passages you are given.

- Mix "multiple_choice" questions (2 to 5 "options", "answer_index" the 0-based index of the \
right one; one right option only) and "short_answer" questions ("answer": a few words).
- Every "explanation" says why the answer is right and ends with the [n] marker of the \
passage that states it. Never invent a marker; never cite the summaries."""


SHORT = 80  # an answer or an option is a few words
# A sentence ends so, before any closing quote or bracket.
SENTENCE_END_RE = re.compile(r"[.!?]['\"”’)\]]*\s*$")
ANSWER_WORDS = 10
# A question about the material, not its subject: "What is the main topic of the table?",
# "Was ist das Hauptthema der Tabelle?" (the reader never saw a passage, a table or a text).
# Nor about the document as a whole: "Was ist der Hauptfakt der Debian-Referenz?"
ABOUT_THE_TEXT_RE = re.compile(
    r"passage|\b(?:the|this|die|der|dem|den|diese[mnrs]?)\s+(?:text|table|section|"
    r"Text(?:es)?|Tabelle|Abschnitt(?:s|es)?)\b|\b(?:main|key)\s+(?:fact|point)s?\b|"
    r"\bHaupt(?:fakt|punkt|aussage)",
    re.IGNORECASE,
)


def _part(reply: dict[str, Any], number: int) -> dict[str, Any]:
    """A multiple-choice question: the right answer among the wrong ones at a place that
    varies from question to question (the model never counts an index); with no wrong
    answer distinct from the right one, a short-answer question. The fact the model copied
    first is the explanation. InvalidOutput for an answer that is a sentence, a question
    that names its own answer, or one that speaks of "the passage" (a reader never saw
    one)."""
    answer = reply["key_term"].strip().rstrip(".")
    if len(answer) >= SHORT or len(answer.split()) > ANSWER_WORDS:
        raise InvalidOutput(f"the answer is a sentence; give it in 1 to {ANSWER_WORDS} words")
    if not SENTENCE_END_RE.search(reply["fact"]):
        # A run of headings and table-of-contents words ("Kapitel 12, Programmierung,
        # Startimpulse, …"), which a gap turned into a question no one could answer.
        raise InvalidOutput("the fact is not a whole sentence; copy one whole sentence")
    named = set(content_terms(answer))
    question = reply["question"]
    if named and named <= set(content_terms(question)):
        # "Was ist die MTU?" for "MTU": a 1.5B model asks so in German, however told. Its
        # fact holds the term, so the fact with a gap asks for it without naming it.
        gapped = _gap(reply["fact"], answer)
        if gapped is None:
            raise InvalidOutput(
                f"the question names its own answer, {answer!r}; write a question whose "
                f"answer is {answer!r} without writing {answer!r} in it"
            )
        question = _("Fill in the gap: %(sentence)s") % {"sentence": gapped}
    if ABOUT_THE_TEXT_RE.search(question):
        raise InvalidOutput(
            "the question is about the wording, not the subject; ask what the fact says "
            "(which command, what number, who, when), as a teacher would"
        )
    if _gap(reply["fact"], answer) is None:
        # The fact is the passage's (acceptance.py checks it); a key term it does not hold
        # is the model's own: "Debian Seidel" for the translator the fact names Jens Seidel.
        raise InvalidOutput(
            f"the key term {answer!r} is not in the fact; copy the key term word for word "
            "from the fact"
        )
    wrong: list[str] = []
    for option in reply["wrong_answers"]:
        option = option.strip()
        if (
            option
            and len(option) < SHORT
            and not _same(option, [answer, *wrong])
            and not _within(option, answer)
            # Named in the question ("wie _____, openssl, stunnel4, …"): no choice at all.
            and _gap(question, option) is None
        ):
            wrong.append(option)
    explanation = cited(reply["fact"], number)
    if not wrong:
        item = {"type": "short_answer", "question": question, "answer": answer}
    else:
        place = number % (len(wrong) + 1)
        options = [*wrong[:place], answer, *wrong[place:]]
        item = {
            "type": "multiple_choice",
            "question": question,
            "options": options,
            "answer_index": place,
        }
    return {"questions": [{**item, "explanation": explanation}]}


GAP = "_____"


def _gap(fact: str, term: str) -> str | None:
    """`fact` with every mention of `term` (as whole words, in any case) a gap; None when
    it has none."""
    mention = re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", re.IGNORECASE)
    gapped = mention.sub(GAP, fact.strip())
    return gapped if gapped != fact.strip() else None


def _same(option: str, others: list[str]) -> bool:
    """Whether `option` says what one of `others` says in other words or case (a wrong
    answer that is the right one again leaves two right options); "between files" and
    "between packages" differ."""
    terms = set(content_terms(option)) or {_normal(option)}
    return any(terms == (set(content_terms(other)) or {_normal(other)}) for other in others)


def _within(option: str, answer: str) -> bool:
    """Whether one of the two says part of what the other says: "Debian" beside the answer
    "Debian-System" is right too, and "dpkg -i" beside "dpkg" half right."""
    terms, answered = set(content_terms(option)), set(content_terms(answer))
    if terms and answered and (terms <= answered or answered <= terms):
        return True
    # Words no stem stands for ("up" in "gave up"): as whole words in the other.
    return _gap(answer, option) is not None or _gap(option, answer) is not None


BY_PASSAGE = Piece(
    schema={
        "type": "object",
        # In this order: the model copies a fact, picks the term that answers it, and only
        # then asks the question (a small model asked for the question first answers it with
        # a sentence). A field's name is read more closely than the prose.
        "properties": {
            "fact": {"type": "string", "minLength": 1, "maxLength": 300},
            "key_term": {"type": "string", "minLength": 1, "maxLength": SHORT},
            "question": {"type": "string", "minLength": 1, "maxLength": 200},
            "wrong_answers": {
                "type": "array",
                "minItems": 2,
                "maxItems": 3,
                "items": {"type": "string", "minLength": 1, "maxLength": SHORT},
            },
        },
        "required": ["fact", "key_term", "question", "wrong_answers"],
        "additionalProperties": False,
    },
    instructions=f"""You write one quiz question from one part of the user's documents.

- "fact": the most important fact stated, one sentence in the document's own words.
- "key_term": the word or few words of that fact a learner must remember (a command, a \
number, a name, a place): 1 to 5 words, not a sentence.
- "question": a question a teacher would ask whose answer is exactly the key term.
- "wrong_answers": 2 or 3 other terms of the same kind (another command, number or name) \
that do not answer the question.
{ONE_PASSAGE}""",
    max_tokens=400,
    part=_part,
    assemble=lambda parts, title: {"title": title, "questions": joined(parts, "questions")},
    title=lambda notebook: _("Quiz: %(notebook)s") % {"notebook": notebook},
    most=SCHEMA["properties"]["questions"]["maxItems"],
)


def check(data: dict[str, Any], passages: int) -> None:
    for number, item in enumerate(data["questions"], start=1):
        if item["type"] == "multiple_choice":
            options = item.get("options") or []
            if not 2 <= len(options) <= 6:
                raise InvalidOutput(f"question {number} needs 2 to 6 options")
            if not 0 <= item.get("answer_index", -1) < len(options):
                raise InvalidOutput(f"question {number}: answer_index names no option")
        elif not (item.get("answer") or "").strip():
            raise InvalidOutput(f"question {number} (short_answer) needs an answer")
        require_markers(item["explanation"], passages, what=f"question {number}'s explanation")


@dataclass(frozen=True)
class Checked:
    correct: bool
    expected: str  # the right option or the model answer
    explanation: str  # with its [n]


def check_answer(item: dict[str, Any], response: str) -> Checked:
    """Whether `response` (an option's index for multiple choice, text for a short answer)
    answers `item`; a UserFacingError for a response of the wrong form."""
    response = response.strip()
    if item["type"] == "multiple_choice":
        if not response.isdigit() or int(response) >= len(item["options"]):
            raise UserFacingError(_("Choose one of the options."))
        right = item["answer_index"]
        return Checked(int(response) == right, item["options"][right], item["explanation"])
    if not response:
        raise UserFacingError(_("Write an answer first."))
    return Checked(
        short_answer_matches(item["answer"], response), item["answer"], item["explanation"]
    )


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def short_answer_matches(expected: str, response: str) -> bool:
    if _normal(expected) == _normal(response):
        return True
    wanted = set(content_terms(expected)) or set(_normal(expected).split())
    given = set(content_terms(response)) | set(_normal(response).split())
    return bool(wanted) and len(wanted & given) / len(wanted) >= SHORT_ANSWER_SHARE


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    for number, item in enumerate(data["questions"], start=1):
        lines.append(f"{number}. {item['question']}")
        if item["type"] == "multiple_choice":
            lines += [f"   - {option}" for option in item["options"]]
            answer = item["options"][item["answer_index"]]
        else:
            answer = item["answer"]
        lines.append(f"   Answer: {answer}. {item['explanation']}")
        lines.append("")
    return "\n".join(lines)


# What checks an answer: the API and MCP leave these out of a quiz as the page does.
ANSWER_FIELDS = ("answer_index", "answer", "explanation")


def without_answers(data: dict[str, Any]) -> dict[str, Any]:
    """The quiz as a person sees it before answering: the questions and their options,
    without the right option, the expected answer or the explanation that gives it away."""
    questions = [
        {key: value for key, value in item.items() if key not in ANSWER_FIELDS}
        for item in data.get("questions") or []
    ]
    return {**data, "questions": questions}
