"""The interface in German: chosen from the browser's languages, or with the switcher."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from notebooks.models import Notebook


def test_a_german_browser_gets_the_german_sign_in_page(page_for, live):
    page = page_for(locale="de-DE", extra_http_headers={"Accept-Language": "de-DE,de;q=0.9"})

    page.goto("/login/")

    assert page.locator("html").get_attribute("lang") == "de"
    assert page.locator("h1").inner_text() == "Anmelden"
    assert page.get_by_label("Benutzername").is_visible()


def test_switching_to_german_translates_the_notebook_page(page_for, live):
    page = page_for("gerda", locale="en-US")
    owner = get_user_model().objects.get(username="gerda")
    notebook = Notebook.objects.create(owner=owner, title="Reisenotizen")
    page.goto(f"/notebooks/{notebook.pk}/")
    assert page.locator("#sources-heading").inner_text() == "Sources"

    page.click(".language-switcher button[value=de]")

    page.wait_for_selector("html[lang=de]")
    assert page.url.endswith(f"/notebooks/{notebook.pk}/")  # back on the same page
    assert page.locator("#sources-heading").inner_text() == "Quellen"
    assert page.locator("#chat-heading").inner_text() == "Chat"
    text = page.locator("body").inner_text()
    assert "Noch keine Quellen" in text
    assert "Abmelden" in text and "Bibliothek" in text
    assert "Erzeugen" in text  # the studio too
    for english in ("No sources yet", "Sign out", "Add web page", "Generate", "Report"):
        assert english not in text
    assert "auf Englisch" in page.locator("#studio-language").inner_text()
    assert page.get_attribute("#question", "placeholder") == "Fragen Sie Ihre Quellen …"

    # The choice sticks: the next page is German too, and English is one click away.
    page.goto("/notebooks/")
    assert page.locator("h1").inner_text() == "Ihre Notizbücher"
    page.click(".language-switcher button[value=en]")
    page.wait_for_selector("html[lang=en]")
    assert page.locator("h1").inner_text() == "Your notebooks"
