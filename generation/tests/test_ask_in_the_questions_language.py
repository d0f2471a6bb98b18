"""`manage.py ask` has no reader whose language it could use: what the answer path writes
itself (a refusal) is in the question's language when Loupe's pages speak it, else English."""

import io

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def ask(owner, notebook, question: str) -> str:
    out = io.StringIO()
    call_command("ask", question, user=owner.username, notebook=notebook.title, stdout=out)
    return out.getvalue()


def test_a_german_question_is_refused_in_german(owner, notebook):
    printed = ask(owner, notebook, "Wo warten die Graureiher, wenn sie Fische fangen wollen?")

    assert "Dieses Notizbuch hat noch keine Quellen" in printed, printed


def test_an_english_question_is_refused_in_english(owner, notebook):
    printed = ask(owner, notebook, "Where do grey herons wait when they want to catch fish?")

    assert "This notebook has no sources yet" in printed, printed


def test_a_question_in_a_language_the_pages_do_not_speak_is_refused_in_english(owner, notebook):
    printed = ask(owner, notebook, "Où attendent les hérons cendrés quand ils veulent pêcher ?")

    assert "This notebook has no sources yet" in printed, printed
