"""The notebook page's "Remembered" panel: the person's facts that apply there, added,
changed (words, or all notebooks) and forgotten; nobody else's, and 404 for an outsider."""

from __future__ import annotations

from django.urls import reverse

from memory.models import Memory
from notebooks.models import Notebook
from sharing.models import Membership


def test_the_page_lists_the_askers_facts(client, owner, outsider, notebook):
    Memory.objects.create(user=owner, notebook=notebook, text="I teach year 9 biology.")
    Memory.objects.create(user=outsider, notebook=None, text="The outsider's own fact.")
    client.force_login(owner)

    html = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert "Remembered: 1 fact" in html
    assert 'value="I teach year 9 biology."' in html
    assert "outsider" not in html


def test_add_change_and_forget_with_htmx(client, owner, notebook):
    client.force_login(owner)
    htmx = {"HTTP_HX_REQUEST": "true"}

    added = client.post(reverse("memory:add", args=[notebook.pk]), {"text": "  Be brief. "}, **htmx)
    fact = Memory.objects.get()
    assert (fact.text, fact.notebook) == ("Be brief.", notebook)
    assert 'value="Be brief."' in added.content.decode()

    client.post(
        reverse("memory:change", args=[notebook.pk, fact.pk]),
        {"text": "Be very brief.", "everywhere": "on"},
        **htmx,
    )
    fact.refresh_from_db()
    assert (fact.text, fact.notebook) == ("Be very brief.", None)

    client.post(reverse("memory:forget", args=[notebook.pk, fact.pk]), **htmx)
    assert not Memory.objects.exists()


def test_an_empty_fact_is_refused_in_the_panel(client, owner, notebook):
    client.force_login(owner)

    response = client.post(
        reverse("memory:add", args=[notebook.pk]), {"text": "   "}, HTTP_HX_REQUEST="true"
    )

    assert "Write the fact to remember" in response.content.decode()
    assert not Memory.objects.exists()


def test_without_javascript_the_forms_return_to_the_notebook(client, owner, notebook):
    client.force_login(owner)

    response = client.post(reverse("memory:add", args=[notebook.pk]), {"text": "Be brief."})

    assert response.status_code == 302
    assert response.url == reverse("notebooks:detail", args=[notebook.pk])


def test_outsiders_and_other_peoples_facts_get_404(client, owner, outsider, notebook):
    fact = Memory.objects.create(user=owner, notebook=notebook, text="Mine.")
    client.force_login(outsider)
    for url in (
        reverse("memory:panel", args=[notebook.pk]),
        reverse("memory:add", args=[notebook.pk]),
        reverse("memory:change", args=[notebook.pk, fact.pk]),
        reverse("memory:forget", args=[notebook.pk, fact.pk]),
    ):
        method = client.get if url.endswith("/memory/") else client.post
        assert method(url, {"text": "x"}).status_code == 404
    # An editor of the notebook may keep facts there, but not change the owner's.
    Membership.objects.create(notebook=notebook, user=outsider, role="editor")
    response = client.post(reverse("memory:forget", args=[notebook.pk, fact.pk]))
    assert response.status_code == 404
    assert Memory.objects.filter(pk=fact.pk).exists()


def test_a_fact_of_another_notebook_is_not_changed_from_this_one(client, owner, notebook):
    other = Notebook.objects.create(owner=owner, title="Other")
    fact = Memory.objects.create(user=owner, notebook=other, text="Elsewhere.")
    client.force_login(owner)

    response = client.post(reverse("memory:change", args=[notebook.pk, fact.pk]), {"text": "x"})

    assert response.status_code == 404


def test_a_viewer_who_may_not_ask_keeps_no_facts(client, owner, outsider, notebook):
    Membership.objects.create(notebook=notebook, user=outsider, role="viewer")
    client.force_login(outsider)

    assert client.get(reverse("memory:panel", args=[notebook.pk])).status_code == 403
    page = client.get(reverse("notebooks:detail", args=[notebook.pk]))
    assert "memory-panel" not in page.content.decode()
