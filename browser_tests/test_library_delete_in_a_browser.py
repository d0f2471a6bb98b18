"""The library's Delete, at 1440 and 390 px: a source no notebook holds goes after a
confirmation; one still in a notebook offers no Delete (it is removed in its notebook)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from library.models import Source
from notebooks.models import Notebook
from notebooks.tests.factories import make_source

from .conftest import SCREENSHOTS


@pytest.mark.parametrize("width", [1440, 390])
def test_a_source_in_no_notebook_is_deleted_from_the_library(page_for, live, width):
    page = page_for("lena", viewport={"width": width, "height": 900})
    owner = get_user_model().objects.get(username="lena")
    notebook = Notebook.objects.create(owner=owner, title="Heath")
    kept = make_source(owner=owner, notebook=notebook, title="Heather survey")
    loose = make_source(owner=owner, notebook=notebook, title="Old gorse notes")
    notebook.sources.remove(loose)
    page.goto("/library/")
    assert page.locator(f"#library-source-{kept.pk} button", has_text="Delete").count() == 0
    page.screenshot(path=SCREENSHOTS / f"library-delete-{width}.png")

    page.on("dialog", lambda dialog: dialog.accept())
    page.locator(f"#library-source-{loose.pk} button", has_text="Delete").click()
    page.wait_for_selector(f"#library-source-{loose.pk}", state="detached")
    assert not Source.objects.filter(pk=loose.pk).exists()
    assert Source.objects.filter(pk=kept.pk).exists()
