"""A quiz is taken in the page: each answer is checked on the server and explained with a
citation of its passage; the page does not hold the answers beforehand."""

import pytest
from django.urls import reverse

from generation.documents.kinds.quiz import short_answer_matches
from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import reply

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


@pytest.fixture
def quiz(fake_openai, studio_sources, make_document):
    fake_openai.chat_replies.append(reply(QUIZ))
    document = make_document("quiz")
    assert document.status == GeneratedDocument.Status.READY, document.error
    return document


def answer(client, quiz, number, value, **headers):
    url = reverse("studio:quiz_answer", args=[quiz.notebook_id, quiz.pk, number])
    return client.post(url, {"answer": value}, **headers)


def test_the_quiz_page_asks_without_giving_the_answers_away(client, owner, quiz):
    client.force_login(owner)

    page = client.get(reverse("studio:document", args=[quiz.notebook_id, quiz.pk])).content.decode()

    assert "How tall is a grey heron?" in page and "95 cm" in page  # an option
    assert "heronries" not in page
    assert "stands about 95 cm tall" not in page  # the explanation comes with the check


def test_a_right_multiple_choice_answer_is_confirmed_with_its_cited_explanation(
    client, owner, quiz
):
    client.force_login(owner)

    result = answer(client, quiz, 1, "1", HTTP_HX_REQUEST="true").content.decode()

    assert "Right." in result
    cited = quiz.citations.get(n=1)
    assert "stands about 95 cm tall" in result
    assert reverse("studio:citation", args=[quiz.notebook_id, quiz.pk, cited.pk]) in result


def test_a_wrong_answer_is_corrected(client, owner, quiz):
    client.force_login(owner)

    result = answer(client, quiz, 1, "0", HTTP_HX_REQUEST="true").content.decode()

    assert "Not quite: the answer is “95 cm”." in result


def test_a_short_answer_is_checked_by_its_words(client, owner, quiz):
    client.force_login(owner)

    right = answer(client, quiz, 2, "  Heronries ", HTTP_HX_REQUEST="true").content.decode()
    wrong = answer(client, quiz, 2, "nests", HTTP_HX_REQUEST="true").content.decode()
    page = answer(client, quiz, 2, "heronries").content.decode()  # without JavaScript

    assert "Right." in right
    assert "Not quite: the answer is “heronries”." in wrong
    assert "Right." in page and "<html" in page


def test_an_answer_of_the_wrong_form_gets_a_message_and_no_question_a_404(client, owner, quiz):
    client.force_login(owner)

    assert "Choose one of the options." in answer(client, quiz, 1, "7").content.decode()
    assert "Write an answer first." in answer(client, quiz, 2, " ").content.decode()
    assert answer(client, quiz, 3, "x").status_code == 404


@pytest.mark.parametrize(
    ("expected", "response", "right"),
    [
        ("in colonies called heronries", "heronries colonies", True),
        ("95 cm", "95 cm", True),
        ("1990", "1991", False),
        ("the Austrian railway", "Austrian railways", True),
        ("the Austrian railway", "German railway", False),
    ],
)
def test_short_answers_match_by_content_words(expected, response, right):
    assert short_answer_matches(expected, response) is right
