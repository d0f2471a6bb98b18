from django.urls import reverse

from notebooks.models import Message
from notebooks.templatetags.notebook_tags import link_citations
from notebooks.tests.factories import make_cited_answer, make_source


def _answer(owner, notebook, content):
    cited = make_cited_answer(
        notebook=notebook, source=make_source(owner=owner, notebook=notebook), content=content
    )
    return cited.message, reverse("notebooks:citation", args=[notebook.pk, cited.pk])


def test_marker_with_a_citation_becomes_a_link(owner, notebook):
    message, url = _answer(owner, notebook, "Otters hold hands [1].")

    html = link_citations(message)

    assert (
        f'<a class="cite" href="{url}" hx-get="{url}" hx-target="#passage" tabindex="-1">[1]</a>'
        in html
    )


def test_marker_without_a_citation_stays_text(owner, notebook):
    message, _ = _answer(owner, notebook, "Otters hold hands [1], and whales sing [9].")

    html = link_citations(message)

    assert "whales sing [9]." in html
    assert html.count("<a ") == 1


def test_html_in_the_answer_is_escaped(owner, notebook):
    message, _ = _answer(owner, notebook, '<script>alert("x")</script> [1]')

    html = link_citations(message)

    assert "<script>" not in html
    assert '&lt;script&gt;alert("x")&lt;/script&gt;' in html


def test_extractive_answer_carries_its_label(client, owner, notebook):
    message, _ = _answer(owner, notebook, "Otters hold hands [1].")
    Message.objects.filter(pk=message.pk).update(mode=Message.Mode.EXTRACTIVE)
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert "Extractive answer — sentences quoted from your sources" in response.text
    assert "Field notes, page 4" in response.text
