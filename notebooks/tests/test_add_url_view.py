from django.urls import reverse

from library.models import Source


def _add(client, notebook, url, **headers):
    return client.post(
        reverse("notebooks:add_url", args=[notebook.pk]),
        {"url": url},
        headers={"HX-Request": "true"} | headers,
    )


def test_the_notebook_page_has_an_add_web_page_form(client, owner, notebook):
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert reverse("notebooks:add_url", args=[notebook.pk]) in response.text
    assert 'name="url"' in response.text


def test_an_added_web_page_is_queued_in_the_notebook(client, owner, notebook):
    client.force_login(owner)

    response = _add(client, notebook, "https://pages.example/herons")

    source = Source.objects.get(owner=owner)
    assert (source.kind, source.url) == ("url", "https://pages.example/herons")
    assert source.status == Source.Status.QUEUED
    assert list(notebook.sources.all()) == [source]
    assert response.status_code == 200
    assert "https://pages.example/herons" in response.text
    assert "Queued" in response.text
    assert 'hx-trigger="every 2s"' in response.text


def test_a_url_of_the_wrong_form_shows_the_reason(client, owner, notebook):
    client.force_login(owner)

    response = _add(client, notebook, "ftp://pages.example/file.txt")

    assert response.status_code == 200
    assert "only http:// and https://" in response.text
    assert not Source.objects.exists()


def test_the_same_url_again_says_it_is_already_in_the_library(client, owner, notebook):
    client.force_login(owner)
    _add(client, notebook, "https://pages.example/herons")

    response = _add(client, notebook, "https://pages.example/herons")

    assert "already in your library" in response.text
    assert Source.objects.count() == 1


def test_adding_a_url_without_htmx_redirects_to_the_notebook(client, owner, notebook):
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:add_url", args=[notebook.pk]), {"url": "https://pages.example/"}
    )

    assert response.status_code == 302
    assert response.url == reverse("notebooks:detail", args=[notebook.pk])
    assert notebook.sources.count() == 1


def test_outsider_gets_404_for_adding_a_url_and_nothing_is_stored(client, outsider, notebook):
    client.force_login(outsider)

    response = _add(client, notebook, "https://pages.example/herons")

    assert response.status_code == 404
    assert not Source.objects.exists()


def test_anonymous_user_is_sent_to_login_for_adding_a_url(client, notebook):
    response = client.post(
        reverse("notebooks:add_url", args=[notebook.pk]), {"url": "https://pages.example/"}
    )

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))
    assert not Source.objects.exists()


def test_a_web_page_being_fetched_says_so_and_links_its_address(client, owner, notebook):
    client.force_login(owner)
    _add(client, notebook, "https://pages.example/herons")
    Source.objects.update(status=Source.Status.PROCESSING)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "fetching the page…" in response.text
    assert 'href="https://pages.example/herons"' in response.text
