"""What a reader does with a ready document: a quiz answer checked, a table as CSV, a mind
map or infographic drawn as SVG."""

from __future__ import annotations

from dataclasses import dataclass

from generation.documents import svg
from generation.documents.models import GeneratedDocument
from texts.errors import UserFacingError


class NoSuchQuestion(UserFacingError):
    """The quiz has no question of that number."""


@dataclass(frozen=True)
class QuizResult:
    number: int  # 1-based question number
    correct: bool
    expected: str
    explanation: str


def check_quiz_answer(*, document: GeneratedDocument, number: int, response: str) -> QuizResult:
    """Check one answer to a ready quiz; NoSuchQuestion for no such question, a
    UserFacingError for a response of the wrong form (no option chosen, no text)."""
    from generation.documents.kinds import quiz

    questions = document.data.get("questions") or []
    if document.kind != GeneratedDocument.Kind.QUIZ or not 1 <= number <= len(questions):
        raise NoSuchQuestion(f"The quiz has no question {number}.")
    checked = quiz.check_answer(questions[number - 1], response)
    return QuizResult(number, checked.correct, checked.expected, checked.explanation)


def table_csv(*, document: GeneratedDocument) -> str:
    from generation.documents.kinds import table

    named = {
        cited.n: f"{cited.source_title}" + (f", p. {cited.page}" if cited.page else "")
        for cited in document.citations.all()
    }
    return table.to_csv(document.data, named)


def document_svg(*, document: GeneratedDocument) -> str:
    if document.kind == GeneratedDocument.Kind.MINDMAP:
        return svg.mindmap_svg(document.data)
    if document.kind == GeneratedDocument.Kind.INFOGRAPHIC:
        return svg.infographic_svg(document.data)
    raise ValueError(f"A {document.kind} has no SVG.")
