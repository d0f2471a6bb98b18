"""The interface speaks the browser's language (English or German) and the switcher's
choice wins; messages from views are translated too."""

from django.urls import reverse


def test_a_german_browser_gets_german_pages(client, owner, notebook):
    client.force_login(owner)

    response = client.get(
        reverse("notebooks:detail", args=[notebook.pk]), headers={"Accept-Language": "de"}
    )

    assert '<html lang="de">' in response.text
    assert "Quellen" in response.text and "Noch keine Quellen" in response.text


def test_an_english_or_unknown_browser_gets_english(client, owner, notebook):
    client.force_login(owner)

    response = client.get(
        reverse("notebooks:detail", args=[notebook.pk]), headers={"Accept-Language": "fr"}
    )

    assert '<html lang="en">' in response.text and "No sources yet" in response.text


def test_the_switcher_sets_the_language_and_returns_to_the_page(client, owner, notebook):
    client.force_login(owner)
    page = reverse("notebooks:detail", args=[notebook.pk])

    response = client.post(reverse("set_language"), {"language": "de", "next": page})

    assert response.status_code == 302 and response["Location"] == page
    german = client.get(page, headers={"Accept-Language": "en"})
    assert "Noch keine Quellen" in german.text


def test_a_view_message_is_translated(client, owner):
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:create"), {"title": "  "}, headers={"Accept-Language": "de"}
    )

    assert "Ein Notizbuch braucht einen Titel." in response.text
