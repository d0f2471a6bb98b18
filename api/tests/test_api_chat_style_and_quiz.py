"""The chat style a notebook answers in, and a quiz's answers checked, through the API: the
same services as the notebook page and the quiz page."""

from __future__ import annotations

import pytest

from generation import chat_style
from generation.documents.models import GeneratedDocument

QUIZ = {
    "title": "Herons",
    "questions": [
        {
            "type": "multiple_choice",
            "question": "How tall is a grey heron?",
            "options": ["50 cm", "95 cm", "2 m"],
            "answer_index": 1,
            "explanation": "A grey heron stands about 95 cm tall [1].",
        },
        {
            "type": "short_answer",
            "question": "What are heron colonies called?",
            "answer": "heronries",
            "explanation": "Herons breed in colonies called heronries [2].",
        },
    ],
}


def test_the_chat_style_is_read_and_changed_and_reaches_the_prompt(api, notebook):
    url = f"/api/v1/notebooks/{notebook.pk}/chat-style"
    assert api.get(url).json() == {"goal": "default", "length": "default", "instructions": ""}

    changed = api.put(url, {"goal": "custom", "length": "shorter", "instructions": "In haiku."})

    assert changed.status_code == 200, changed.content
    notebook.refresh_from_db()
    prompt = chat_style.system_prompt(notebook)
    assert "In haiku." in prompt and chat_style.LENGTHS["shorter"] in prompt


def test_a_custom_style_without_instructions_and_an_unknown_goal_are_refused(api, notebook):
    url = f"/api/v1/notebooks/{notebook.pk}/chat-style"

    empty = api.put(url, {"goal": "custom", "length": "default", "instructions": "  "})
    unknown = api.put(url, {"goal": "pirate", "length": "default"})

    assert empty.status_code == 422 and empty.json()["field"] == "body.instructions"
    assert unknown.status_code == 422 and unknown.json()["field"] == "body.goal"
    notebook.refresh_from_db()
    assert notebook.chat_goal == "default"


@pytest.fixture
def quiz(owner, notebook):
    return GeneratedDocument.objects.create(
        notebook=notebook,
        owner=owner,
        kind=GeneratedDocument.Kind.QUIZ,
        status=GeneratedDocument.Status.READY,
        title="Herons",
        content=QUIZ,
    )


def _check(api, quiz, number, answer):
    url = f"/api/v1/notebooks/{quiz.notebook_id}/documents/{quiz.pk}/quiz/{number}"
    return api.post(url, {"answer": answer})


def test_quiz_answers_are_checked_with_the_expected_answer_and_its_explanation(api, quiz):
    right = _check(api, quiz, 1, "1").json()
    wrong = _check(api, quiz, 1, "0").json()
    worded = _check(api, quiz, 2, "They are called heronries").json()

    assert right == {
        "number": 1,
        "correct": True,
        "expected": "95 cm",
        "explanation": "A grey heron stands about 95 cm tall [1].",
    }
    assert wrong["correct"] is False and wrong["expected"] == "95 cm"
    assert worded["correct"] is True


def test_no_such_question_an_answer_of_the_wrong_form_and_a_report_are_refused(
    api, quiz, owner, notebook
):
    report = GeneratedDocument.objects.create(
        notebook=notebook,
        owner=owner,
        kind=GeneratedDocument.Kind.REPORT,
        status=GeneratedDocument.Status.READY,
        title="Report",
        content={"title": "Report", "sections": []},
    )

    assert _check(api, quiz, 3, "1").status_code == 404
    wrong_form = _check(api, quiz, 1, "95 cm")
    assert wrong_form.status_code == 422 and wrong_form.json()["field"] == "body.answer"
    assert _check(api, report, 1, "1").status_code == 404


def test_a_quiz_is_read_without_its_answers_unless_they_are_asked_for(api, quiz):
    url = f"/api/v1/notebooks/{quiz.notebook_id}/documents/{quiz.pk}"

    shown = api.get(url).json()["content"]
    key = api.get(url, {"answers": "true"}).json()["content"]

    # As the page: the questions and their options, nothing that gives an answer away.
    assert shown["questions"] == [
        {
            "type": "multiple_choice",
            "question": "How tall is a grey heron?",
            "options": ["50 cm", "95 cm", "2 m"],
        },
        {"type": "short_answer", "question": "What are heron colonies called?"},
    ]
    assert "heronries" not in str(shown) and "95 cm tall" not in str(shown)
    assert key == QUIZ
    quiz.refresh_from_db()
    assert quiz.content == QUIZ  # nothing stored was changed
