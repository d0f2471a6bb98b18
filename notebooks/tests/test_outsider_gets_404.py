import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from ingest.tests.data import PDFS
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


def test_outsider_gets_404_for_a_streamed_question_and_nothing_is_stored(
    client, outsider, notebook
):
    client.force_login(outsider)

    response = client.post(
        reverse("notebooks:ask_stream", args=[notebook.pk]), {"question": "Hello?"}
    )

    assert response.status_code == 404
    assert not Message.objects.exists()


def test_outsider_gets_404_for_a_message(client, outsider, notebook, cited):
    theirs = Notebook.objects.create(owner=outsider, title="Mine")
    client.force_login(outsider)

    for under in (notebook, theirs):
        url = reverse("notebooks:message", args=[under.pk, cited.message.pk])
        assert client.get(url).status_code == 404, url
        assert client.get(url, headers={"HX-Request": "true"}).status_code == 404, url


def test_message_of_another_notebook_is_404_even_for_its_owner(client, owner, cited):
    other = Notebook.objects.create(owner=owner, title="Other")
    client.force_login(owner)

    ours = client.get(
        reverse(
            "notebooks:message", args=[cited.message.conversation.notebook_id, cited.message.pk]
        )
    )
    elsewhere = client.get(reverse("notebooks:message", args=[other.pk, cited.message.pk]))

    assert ours.status_code == 200
    assert elsewhere.status_code == 404


def test_streaming_into_a_conversation_of_another_notebook_is_404(client, owner, notebook):
    other = Notebook.objects.create(owner=owner, title="Other")
    elsewhere = Conversation.objects.create(notebook=other, user=other.owner)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:ask_stream", args=[notebook.pk]),
        {"question": "Hello?", "conversation": elsewhere.pk},
    )

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
    elsewhere = Conversation.objects.create(notebook=other, user=other.owner)
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
        ("post", "notebooks:ask_stream", True),
    ],
)
def test_anonymous_user_is_sent_to_login(client, notebook, method, name, with_notebook):
    url = reverse(name, args=[notebook.pk] if with_notebook else [])

    response = getattr(client, method)(url)

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_anonymous_user_is_sent_to_login_for_a_message(client, notebook, cited):
    response = client.get(reverse("notebooks:message", args=[notebook.pk, cited.message.pk]))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_anonymous_user_is_sent_to_login_for_a_citation(client, notebook, cited):
    response = client.get(reverse("notebooks:citation", args=[notebook.pk, cited.pk]))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def _conversation_urls(notebook, conversation):
    """Every conversation URL, with the method it takes."""
    return [
        ("get", reverse("notebooks:new_conversation", args=[notebook.pk])),
        ("get", reverse("notebooks:conversation", args=[notebook.pk, conversation.pk])),
        ("post", reverse("notebooks:rename_conversation", args=[notebook.pk, conversation.pk])),
        ("post", reverse("notebooks:delete_conversation", args=[notebook.pk, conversation.pk])),
    ]


def test_outsider_gets_404_on_every_conversation_url(client, outsider, notebook, cited):
    conversation = cited.message.conversation
    client.force_login(outsider)

    for method, url in _conversation_urls(notebook, conversation):
        assert getattr(client, method)(url, {"title": "Mine"}).status_code == 404, url
    conversation.refresh_from_db()
    assert conversation.title == ""


def test_outsider_gets_404_for_a_conversation_under_their_own_notebook(client, outsider, cited):
    theirs = Notebook.objects.create(owner=outsider, title="Mine")
    conversation = cited.message.conversation
    client.force_login(outsider)

    for method, url in _conversation_urls(theirs, conversation)[1:]:
        assert getattr(client, method)(url).status_code == 404, url
    assert Conversation.objects.filter(pk=conversation.pk).exists()


def test_anonymous_user_is_sent_to_login_for_every_conversation_url(client, notebook, cited):
    for method, url in _conversation_urls(notebook, cited.message.conversation):
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("login"))


def test_asking_about_a_source_of_another_notebook_is_404(client, owner, outsider, notebook):
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    foreign = make_source(owner=outsider, notebook=theirs, title="Their notes")
    mine_elsewhere = make_source(
        owner=owner, notebook=Notebook.objects.create(owner=owner, title="Other"), title="Mine"
    )
    client.force_login(owner)

    for source in (foreign, mine_elsewhere):
        asked = client.post(
            reverse("notebooks:ask", args=[notebook.pk]),
            {"question": "Hello?", "source": source.pk},
        )
        page = client.get(
            reverse("notebooks:new_conversation", args=[notebook.pk]), {"about": source.pk}
        )
        assert asked.status_code == 404
        assert page.status_code == 404
    assert not Message.objects.exists()


def _pdf_in(notebook, title="Crazy ones"):
    source = make_source(owner=notebook.owner, notebook=notebook, title=title)
    source.kind, source.page_count = Source.Kind.PDF, 1
    pdf = (PDFS / "pypdf" / "crazyones.pdf").read_bytes()
    source.file.save("crazyones.pdf", ContentFile(pdf))
    return source


def test_outsider_gets_404_for_a_page_image(client, owner, outsider, notebook):
    source = _pdf_in(notebook)
    url = reverse("notebooks:page_image", args=[notebook.pk, source.pk, 1])

    client.force_login(owner)
    assert client.get(url).status_code == 200
    client.force_login(outsider)
    assert client.get(url).status_code == 404


def test_outsider_gets_404_for_a_page_image_under_their_own_notebook(client, outsider, notebook):
    source = _pdf_in(notebook)
    theirs = Notebook.objects.create(owner=outsider, title="Mine")
    client.force_login(outsider)

    response = client.get(reverse("notebooks:page_image", args=[theirs.pk, source.pk, 1]))

    assert response.status_code == 404


def test_outsider_gets_404_highlighting_a_citation_of_the_owner(client, outsider, cited):
    theirs = Notebook.objects.create(owner=outsider, title="Mine")
    their_pdf = _pdf_in(theirs, title="Their copy")
    client.force_login(outsider)
    url = reverse("notebooks:page_image", args=[theirs.pk, their_pdf.pk, 1])

    assert client.get(url).status_code == 200
    assert client.get(url, {"citation": cited.pk}).status_code == 404


def test_anonymous_user_is_sent_to_login_for_a_page_image(client, notebook):
    source = _pdf_in(notebook)

    response = client.get(reverse("notebooks:page_image", args=[notebook.pk, source.pk, 1]))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))
