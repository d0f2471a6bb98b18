from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from library.models import Preferences, Source


def _text_file():
    return SimpleUploadedFile("otters.txt", b"Sea otters hold hands.", content_type="text/plain")


def test_the_capture_select_starts_at_the_users_default(client, owner, notebook):
    Preferences.objects.create(user=owner, pdf_capture="vision")
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert '<select id="upload-capture" name="pdf_capture"' in response.text
    assert '<option value="vision" selected>' in response.text
    assert '<option value="auto">' in response.text


def test_without_a_preference_the_capture_select_starts_at_auto(client, owner, notebook):
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert '<option value="auto" selected>' in response.text


def test_an_upload_is_read_in_the_capture_mode_chosen_for_it(client, owner, notebook):
    Preferences.objects.create(user=owner, pdf_capture="vision")
    client.force_login(owner)
    url = reverse("notebooks:upload", args=[notebook.pk])

    client.post(url, {"files": [_text_file()], "pdf_capture": "text"})

    assert Source.objects.get(owner=owner).pdf_capture == "text"


def test_an_upload_without_a_choice_uses_the_users_default(client, owner, notebook):
    Preferences.objects.create(user=owner, pdf_capture="vision")
    client.force_login(owner)

    client.post(reverse("notebooks:upload", args=[notebook.pk]), {"files": [_text_file()]})

    assert Source.objects.get(owner=owner).pdf_capture == "vision"


def test_an_unknown_capture_mode_is_refused_with_a_message(client, owner, notebook):
    client.force_login(owner)
    url = reverse("notebooks:upload", args=[notebook.pk])

    response = client.post(
        url, {"files": [_text_file()], "pdf_capture": "ocr"}, headers={"HX-Request": "true"}
    )

    assert "Unknown PDF capture mode &#x27;ocr&#x27;" in response.text
    assert not Source.objects.exists()
