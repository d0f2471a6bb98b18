"""A citation says the page as the document prints it beside its place in the file, and the
section the passage is in."""

from django.urls import reverse

from notebooks.tests.factories import make_cited_answer, make_source


def _cited_in_section(owner, notebook):
    cited = make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    cited.chunk.page_label = "ii"
    cited.chunk.section = ["Marine mammals", "2.3 Sleeping habits"]
    cited.chunk.save()
    return cited


def test_the_passage_panel_shows_the_printed_page_and_the_section(client, owner, notebook):
    cited = _cited_in_section(owner, notebook)
    client.force_login(owner)

    response = client.get(
        reverse("notebooks:citation", args=[notebook.pk, cited.pk]), headers={"HX-Request": "true"}
    )

    assert "<dd>ii · PDF page 4</dd>" in response.text
    assert "<dd>Marine mammals › 2.3 Sleeping habits</dd>" in response.text


def test_the_answers_citation_list_shows_the_printed_page_and_the_section(client, owner, notebook):
    _cited_in_section(owner, notebook)
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert "Field notes, p. ii · PDF page 4" in page
    assert "· Marine mammals › 2.3 Sleeping habits" in page


def test_a_page_that_prints_its_own_number_shows_it_once(client, owner, notebook):
    make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert "Field notes, page 4" in page
    assert "PDF page" not in page


def test_german_readers_see_the_page_label_in_german(client, owner, notebook):
    _cited_in_section(owner, notebook)
    client.force_login(owner)

    page = client.get(
        reverse("notebooks:detail", args=[notebook.pk]), HTTP_ACCEPT_LANGUAGE="de"
    ).content.decode()

    assert "Field notes, S. ii · PDF-Seite 4" in page
