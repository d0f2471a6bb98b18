"""Pages show the message of a UserFacingError and nothing else: a ValueError from a bug
fails the request loudly instead of reaching the person as if it were advice."""

import pytest
from django.urls import reverse

from generation.answering import QuestionRefused
from generation.documents.services import DocumentBusy, NoSuchQuestion
from ingest.services import SourceBusy, UploadRejected
from notebooks.services import NotebookTitleTaken
from sharing.services import SharingError
from texts.errors import UserFacingError

HX = {"HX-Request": "true"}


def test_a_refused_question_is_shown_beside_it(client, owner, notebook, monkeypatch):
    def refusing(**kwargs):
        raise QuestionRefused("No source is ticked: tick at least one source to ask about.")

    monkeypatch.setattr("notebooks.views.chat.answer_question", refusing)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]), {"question": "Otters?"}, headers=HX
    )

    assert response.status_code == 200
    assert "No source is ticked" in response.text


def test_a_bug_raising_value_error_while_asking_fails_loudly(client, owner, notebook, monkeypatch):
    def buggy(**kwargs):
        raise ValueError("invalid literal for int() with base 10: 'x'")

    monkeypatch.setattr("notebooks.views.chat.answer_question", buggy)
    client.force_login(owner)

    with pytest.raises(ValueError, match="invalid literal"):
        client.post(
            reverse("notebooks:ask", args=[notebook.pk]), {"question": "Otters?"}, headers=HX
        )


def test_a_bug_raising_value_error_while_saving_a_note_fails_loudly(
    client, owner, notebook, monkeypatch
):
    def buggy(**kwargs):
        raise ValueError("too many values to unpack")

    monkeypatch.setattr("notebooks.views.notes.create_note", buggy)
    client.force_login(owner)

    with pytest.raises(ValueError, match="too many values"):
        client.post(reverse("notebooks:new_note", args=[notebook.pk]), {"content": "Mine"})


@pytest.mark.parametrize(
    "error",
    [
        UploadRejected,
        SourceBusy,
        SharingError,
        DocumentBusy,
        NoSuchQuestion,
        QuestionRefused,
        NotebookTitleTaken,
    ],
)
def test_the_errors_pages_show_are_user_facing_errors_and_no_value_errors(error):
    assert issubclass(error, UserFacingError)
    assert not issubclass(error, ValueError)
