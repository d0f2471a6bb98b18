"""Another person who opens a notebook's address sees the same 404 as for one that does
not exist: nothing of the notebook, its sources or its chat."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from notebooks.models import Notebook


def test_an_outsider_opening_the_notebook_url_gets_404(page_for, live):
    owner = get_user_model().objects.create_user(username="owner-b", password="x" * 12)
    notebook = Notebook.objects.create(owner=owner, title="Private plans")
    page = page_for("mallory")
    page.console.expect(404, f"/notebooks/{notebook.pk}/")
    page.console.expect(404, f"/notebooks/{notebook.pk + 1000}/")

    response = page.goto(f"/notebooks/{notebook.pk}/")

    assert response.status == 404
    assert "Private plans" not in page.content()
    missing = page.goto(f"/notebooks/{notebook.pk + 1000}/")
    assert missing.status == 404
