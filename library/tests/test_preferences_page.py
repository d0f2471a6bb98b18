from django.urls import reverse

from library.models import Preferences


def test_a_person_changes_their_default_capture_mode(client, owner):
    client.force_login(owner)
    url = reverse("library:preferences")

    response = client.post(url, {"pdf_capture": "text"})

    assert response.status_code == 302
    assert response.url == url
    assert Preferences.of(owner).pdf_capture == "text"
    assert '<option value="text" selected>' in client.get(url).text


def test_the_page_shows_auto_before_anything_is_chosen(client, owner):
    client.force_login(owner)

    response = client.get(reverse("library:preferences"))

    assert response.status_code == 200
    assert '<option value="auto" selected>' in response.text
    assert not Preferences.objects.exists()


def test_an_unknown_mode_is_refused(client, owner):
    client.force_login(owner)

    response = client.post(reverse("library:preferences"), {"pdf_capture": "ocr"})

    assert response.status_code == 200
    assert "Select a valid choice" in response.text
    assert not Preferences.objects.exists()


def test_an_outsider_changes_only_their_own_preferences(client, owner, outsider):
    Preferences.objects.create(user=owner, pdf_capture="vision")
    client.force_login(outsider)

    client.post(reverse("library:preferences"), {"pdf_capture": "text", "user": owner.pk})

    assert Preferences.of(owner).pdf_capture == "vision"
    assert Preferences.of(outsider).pdf_capture == "text"


def test_anonymous_visitors_are_sent_to_the_login_page(client, owner):
    url = reverse("library:preferences")

    response = client.post(url, {"pdf_capture": "text"})

    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={url}"
    assert not Preferences.objects.exists()
