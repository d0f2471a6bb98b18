"""A quiz: multiple-choice and short-answer questions, each with an explanation that cites
the passage holding its answer. Answers are checked on the server (check_answer); the page
never receives them before the person has answered."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.definitions import Definition, blanked, definitions
from generation.documents.figures import Figure, source_figures
from generation.documents.inputs import Inputs
from generation.documents.markers import require_markers
from generation.documents.reading import Sentence, cite, read_sentences, source_chunks
from generation.documents.structured import InvalidOutput
from library.sentences import stands_alone
from library.words import content_terms
from texts.errors import UserFacingError

FOCUS = "key facts, definitions, figures and conclusions worth remembering"
QUESTIONS = 8
# A short answer is right when it holds this share of the expected answer's content words
# (compared by their first five letters, as the extractive answerer does).
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
    answers `item`; ValueError for a response of the wrong form."""
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


# Cloze questions (extractive): a definition with its term blanked out.
BLANK = "_____"
# Rules ("… must …") ask about a term the sources define elsewhere.
RULE_RE = re.compile(r"\b(?:must|should|has to|have to|muss|müssen|soll|sollte|sollten)\b")


def spread(definitions: list[Definition]) -> list[Definition]:
    """The definitions taken from each major section in turn, so a quiz covers them all."""
    by_part: dict[tuple[str, ...], list[Definition]] = {}
    for definition in definitions:
        by_part.setdefault(definition.sentence.section[:1], []).append(definition)
    queues = list(by_part.values())
    spread: list[Definition] = []
    while any(queues):
        for queue in queues:
            if queue:
                spread.append(queue.pop(0))
    return spread


def _rules(sentences: list[Sentence], terms: list[Definition]) -> list[Definition]:
    """Rules that name a defined term: the term is what the question asks for."""
    found = []
    for sentence in sentences:
        if not RULE_RE.search(sentence.text) or not stands_alone(sentence.text, sentence.language):
            continue
        for term in terms:
            if term.sentence is not sentence and BLANK in blanked(sentence.text, term.term, BLANK):
                found.append(Definition(term=term.term, sentence=sentence, kind=term.kind))
                break
    return found


def distractors(answer: Definition, pool: list[Definition], rng: random.Random) -> list[str]:
    """Up to three other terms of the same kind from the same source, the nearest in length
    first; terms of another kind only to make up two."""
    others = [
        d for d in pool
        if d.term.casefold() != answer.term.casefold()
        and d.sentence.chunk.source_id == answer.sentence.chunk.source_id
        and d.term.casefold() not in answer.sentence.text.casefold()
    ]  # fmt: skip
    same = [d.term for d in others if d.kind == answer.kind]
    rng.shuffle(same)
    same.sort(key=lambda term: abs(len(term.split()) - len(answer.term.split())))
    chosen = list(dict.fromkeys(same))[:3]
    if len(chosen) < 2:
        rest = [d.term for d in others if d.term not in chosen]
        rng.shuffle(rest)
        chosen += rest[: 2 - len(chosen)]
    return chosen


def extractive(inputs: Inputs, *, notebook_title: str, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)  # the same document always shuffles its options alike
    pool: list[Definition] = []
    asked: list[Definition] = []
    for source in inputs.sources:
        sentences = read_sentences(source_chunks(source))
        defined = definitions(sentences)
        pool += defined
        asked += spread(defined) + _rules(sentences, defined)
        # Too few definitions: the figures the sentences state make up the rest.
        stated = [
            Definition(term=figure.value, sentence=figure.sentence, kind="figure")
            for figure in source_figures(source)
            if isinstance(figure, Figure)
            and stands_alone(figure.sentence.text, figure.sentence.language)
        ]
        pool += stated
        asked += stated[: max(0, QUESTIONS - len(defined))]
    questions: list[dict[str, Any]] = []
    used: set[str] = set()
    for item in asked:
        if len(questions) == QUESTIONS or item.term.casefold() in used:
            continue
        used.add(item.term.casefold())
        cloze = blanked(item.sentence.text, item.term, BLANK)
        explanation = _("The source says: “%(sentence)s”") % {"sentence": item.sentence.text}
        explanation += " " + cite(inputs, item.sentence.chunk)
        question = _("Fill in the blank: %(sentence)s") % {"sentence": cloze}
        others = distractors(item, pool, rng)
        if len(others) >= 2:
            options = [item.term, *others]
            rng.shuffle(options)
            questions.append(
                {
                    "type": "multiple_choice",
                    "question": question,
                    "options": options,
                    "answer_index": options.index(item.term),
                    "explanation": explanation,
                }
            )
        else:
            questions.append(
                {
                    "type": "short_answer",
                    "question": question,
                    "answer": item.term,
                    "explanation": explanation,
                }
            )
    return {"title": _("Quiz: %(notebook)s") % {"notebook": notebook_title}, "questions": questions}


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
