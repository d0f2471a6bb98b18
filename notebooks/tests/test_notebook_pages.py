from django.urls import reverse

from notebooks.models import Notebook


def test_list_shows_own_notebooks_only(client, owner, outsider, notebook):
    Notebook.objects.create(owner=outsider, title="Someone else's secrets")
    client.force_login(owner)

    response = client.get(reverse("notebooks:list"))

    assert response.status_code == 200
    assert "Research" in response.text
    assert "Someone else" not in response.text


def test_creating_a_notebook_opens_it(client, owner):
    client.force_login(owner)

    response = client.post(reverse("notebooks:create"), {"title": "  Climate  "})

    notebook = Notebook.objects.get(owner=owner, title="Climate")
    assert response.status_code == 302
    assert response.url == reverse("notebooks:detail", args=[notebook.pk])


def test_duplicate_title_shows_the_error(client, owner, notebook):
    client.force_login(owner)

    response = client.post(reverse("notebooks:create"), {"title": "Research"})

    assert response.status_code == 200
    assert "You already have a notebook called" in response.text
    assert Notebook.objects.filter(owner=owner).count() == 1


def test_empty_title_shows_the_error(client, owner):
    client.force_login(owner)

    response = client.post(reverse("notebooks:create"), {"title": "   "})

    assert response.status_code == 200
    assert "A notebook needs a title." in response.text
    assert not Notebook.objects.exists()


def test_detail_shows_empty_sources_and_chat(client, owner, notebook):
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert response.status_code == 200
    assert "No sources yet" in response.text
    assert 'enctype="multipart/form-data"' in response.text
    assert 'id="passage"' in response.text
