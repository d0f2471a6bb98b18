import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from billing.models import Usage
from ingest.services import add_source, process_source
from library.models import Source
from notebooks.models import Message

SPENT = "Your credit is spent"


def _text_file():
    return SimpleUploadedFile("otters.txt", b"Sea otters hold hands.", content_type="text/plain")


def test_upload_is_refused_with_a_page_saying_whom_to_ask(
    client, owner, notebook, spend_all_credit, settings
):
    settings.CREDIT_CONTACT = "Ada at ada@example.org"
    spend_all_credit(owner)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:upload", args=[notebook.pk]), {"files": [_text_file()]}
    )

    assert response.status_code == 402
    assert SPENT in response.text
    assert "Ada at ada@example.org" in response.text
    assert "<html" in response.text
    assert not Source.objects.exists()


def test_htmx_upload_gets_a_notice_for_the_header(client, owner, notebook, spend_all_credit):
    spend_all_credit(owner)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:upload", args=[notebook.pk]),
        {"files": [_text_file()]},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 402
    assert SPENT in response.text
    assert "<html" not in response.text
    assert response["HX-Retarget"] == "#credit-notice"
    assert not Source.objects.exists()


def test_adding_a_web_page_is_refused(client, owner, notebook, spend_all_credit):
    spend_all_credit(owner)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:add_url", args=[notebook.pk]), {"url": "https://example.org/"}
    )

    assert response.status_code == 402
    assert SPENT in response.text
    assert not Source.objects.exists()


def test_asking_is_refused_without_a_model_call(
    client, notebook, fake_openai, add_ready_source, spend_all_credit
):
    add_ready_source(notebook, b"Sea otters hold hands while they sleep.")
    spend_all_credit(notebook.owner)
    calls = Usage.objects.count()
    client.force_login(notebook.owner)

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "Do otters sleep?"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 402
    assert SPENT in response.text
    assert Usage.objects.count() == calls
    assert len(fake_openai.chat_requests) == 0
    assert not Message.objects.exists()


def test_the_ask_command_fails_with_the_message(notebook, spend_all_credit):
    spend_all_credit(notebook.owner)

    with pytest.raises(CommandError, match=SPENT):
        call_command("ask", "Do otters sleep?", user="owner", notebook="Research")


def test_a_queued_source_fails_when_the_credit_ran_out_before_it_was_processed(
    notebook, fake_openai, spend_all_credit
):
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(b"Otters.", name="a.txt")
    )
    spend_all_credit(notebook.owner)

    source = process_source(source_id=added.source.pk)

    assert source.status == Source.Status.FAILED
    assert SPENT in source.error
    assert not fake_openai.embedding_requests


def test_pages_that_cost_nothing_stay_open(client, owner, notebook, spend_all_credit):
    spend_all_credit(owner)
    client.force_login(owner)

    assert client.get(reverse("notebooks:detail", args=[notebook.pk])).status_code == 200
    assert client.get(reverse("billing:usage")).status_code == 200
