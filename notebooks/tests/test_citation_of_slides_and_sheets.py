"""A citation into a slide deck names the slide, one into a workbook the sheet and its rows,
in the reader's language."""

from django.urls import reverse

from notebooks.tests.factories import make_cited_answer, make_source


def _cited_at(owner, notebook, *, page_label, section):
    cited = make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    cited.chunk.page_label = page_label
    cited.chunk.section = section
    cited.chunk.save()
    return cited


def test_the_passage_panel_names_the_slide_as_its_place(client, owner, notebook):
    cited = _cited_at(owner, notebook, page_label="slide 4", section=["Sleeping habits"])
    client.force_login(owner)

    response = client.get(
        reverse("notebooks:citation", args=[notebook.pk, cited.pk]), headers={"HX-Request": "true"}
    )

    assert "<dt>Place</dt><dd>slide 4</dd>" in response.text
    assert "PDF page" not in response.text
    assert "<dd>Sleeping habits</dd>" in response.text


def test_the_answers_citation_names_the_sheet_and_its_rows(client, owner, notebook):
    _cited_at(owner, notebook, page_label="rows 12–40", section=["Otters"])
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert "Field notes, rows 12–40" in page
    assert "· Otters" in page


def test_german_readers_see_the_slide_in_german(client, owner, notebook):
    _cited_at(owner, notebook, page_label="slide 4", section=[])
    client.force_login(owner)

    page = client.get(
        reverse("notebooks:detail", args=[notebook.pk]), HTTP_ACCEPT_LANGUAGE="de"
    ).content.decode()

    assert "Field notes, Folie 4" in page
