import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from library.models import Source
from notebooks.models import Conversation, Message, Notebook
from notebooks.tests.factories import make_cited_answer, make_source


@pytest.fixture
def cited(owner, notebook):
    return make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))


def test_outsider_gets_404_for_the_notebook_page(client, outsider, notebook):
    client.force_login(outsider)
    assert client.get(reverse("notebooks:detail", args=[notebook.pk])).status_code == 404


def test_outsider_gets_404_for_the_sources_partial(client, outsider, notebook):
    client.force_login(outsider)
    assert client.get(reverse("notebooks:sources", args=[notebook.pk])).status_code == 404


def test_outsider_gets_404_for_an_upload_and_nothing_is_stored(client, outsider, notebook):
    client.force_login(outsider)
    upload = SimpleUploadedFile("notes.txt", b"Intruder text.", content_type="text/plain")

    response = client.post(reverse("notebooks:upload", args=[notebook.pk]), {"files": [upload]})

    assert response.status_code == 404
    assert not Source.objects.exists()


def test_outsider_gets_404_for_a_question_and_nothing_is_stored(client, outsider, notebook):
    client.force_login(outsider)

    response = client.post(reverse("notebooks:ask", args=[notebook.pk]), {"question": "Hello?"})

    assert response.status_code == 404
    assert not Message.objects.exists()


def test_outsider_gets_404_for_a_citation(client, outsider, notebook, cited):
    client.force_login(outsider)
    url = reverse("notebooks:citation", args=[notebook.pk, cited.pk])
    assert client.get(url).status_code == 404


def test_outsider_gets_404_for_a_citation_under_their_own_notebook(client, outsider, cited):
    theirs = Notebook.objects.create(owner=outsider, title="Mine")
    client.force_login(outsider)
    url = reverse("notebooks:citation", args=[theirs.pk, cited.pk])
    assert client.get(url).status_code == 404


def test_citation_of_another_notebook_is_404_even_for_its_owner(client, owner, cited):
    other = Notebook.objects.create(owner=owner, title="Other")
    client.force_login(owner)
    url = reverse("notebooks:citation", args=[other.pk, cited.pk])
    assert client.get(url).status_code == 404


def test_conversation_of_another_notebook_is_404(client, owner, notebook):
    other = Notebook.objects.create(owner=owner, title="Other")
    elsewhere = Conversation.objects.create(notebook=other)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "Hello?", "conversation": elsewhere.pk},
    )

    assert response.status_code == 404
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("method", "name", "with_notebook"),
    [
        ("get", "notebooks:list", False),
        ("post", "notebooks:create", False),
        ("get", "notebooks:detail", True),
        ("get", "notebooks:sources", True),
        ("post", "notebooks:upload", True),
        ("post", "notebooks:add_url", True),
        ("post", "notebooks:ask", True),
    ],
)
def test_anonymous_user_is_sent_to_login(client, notebook, method, name, with_notebook):
    url = reverse(name, args=[notebook.pk] if with_notebook else [])

    response = getattr(client, method)(url)

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_anonymous_user_is_sent_to_login_for_a_citation(client, notebook, cited):
    response = client.get(reverse("notebooks:citation", args=[notebook.pk, cited.pk]))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))
