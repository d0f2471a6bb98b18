from django.urls import reverse

from library.models import Chunk
from notebooks.templatetags.notebook_tags import link_citations
from notebooks.tests.factories import make_cited_answer, make_source


def test_a_weakly_supported_citation_is_marked_in_the_answer_and_its_list(client, notebook):
    citation = make_cited_answer(
        notebook=notebook, source=make_source(owner=notebook.owner, notebook=notebook)
    )
    citation.supported = False
    citation.save()
    client.force_login(notebook.owner)

    html = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert 'class="cite cite-weak"' in html
    assert "weakly supported" in html


def test_a_supported_citation_looks_like_any_other(notebook):
    citation = make_cited_answer(
        notebook=notebook, source=make_source(owner=notebook.owner, notebook=notebook)
    )
    citation.supported = True
    citation.save()

    assert "cite-weak" not in link_citations(citation.message)


def test_the_passage_panel_shows_the_chunk_with_the_quote_highlighted(client, notebook):
    citation = make_cited_answer(
        notebook=notebook, source=make_source(owner=notebook.owner, notebook=notebook)
    )
    Chunk.objects.filter(pk=citation.chunk_id).update(
        text="Otters are mammals. Sea otters hold hands while they sleep. They eat urchins."
    )
    citation.quote = "Sea otters hold hands while they sleep."
    citation.supported = False
    citation.save()
    client.force_login(notebook.owner)

    html = client.get(
        reverse("notebooks:citation", args=[notebook.pk, citation.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()

    assert (
        "Otters are mammals. <mark>Sea otters hold hands while they sleep.</mark> They eat urchins."
        in html
    )
    assert "Weakly supported" in html
