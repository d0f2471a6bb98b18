"""A model's answer is Markdown: rendered, sanitised, and nothing in it can run or load."""

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from notebooks.models import Citation, Message
from notebooks.templatetags.notebook_tags import link_citations
from notebooks.tests.factories import make_cited_answer, make_source


class _Elements(HTMLParser):
    """The elements of an HTML fragment as (tag, attributes), as a browser would parse them."""

    def __init__(self, html):
        super().__init__()
        self.found = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def _render(owner, notebook, content):
    cited = make_cited_answer(
        notebook=notebook, source=make_source(owner=owner, notebook=notebook), content=content
    )
    return str(link_citations(cited.message)), cited


@pytest.mark.parametrize(
    "attack",
    [
        '<script>alert("x")</script>',
        "<img src=x onerror=alert(1)>",
        "[click](javascript:alert(1))",
        '<a href="javascript:alert(1)">click</a>',
        '<iframe src="https://evil.example/"></iframe>',
        "![pixel](https://evil.example/pixel.png)",
        '<a href="https://ok.example/" hx-get="/steal" hx-target="body">x</a>',
        '[x](https://ok.example/ "t" onclick=alert(1))',
        "<svg onload=alert(1)>",
    ],
)
def test_an_attack_in_the_answer_renders_inert(owner, notebook, attack):
    html, _ = _render(owner, notebook, f"Otters hold hands [1]. {attack}")

    elements = _Elements(html).found
    # A span: the mark of a sentence no passage supports (the attack's text, uncited).
    assert {tag for tag, _ in elements} <= {"p", "a", "span"}
    assert all(attrs["class"] == "unsupported-mark" for tag, attrs in elements if tag == "span")
    for _, attrs in elements:
        assert not any(name.startswith("on") for name in attrs)
        assert not attrs.get("href", "").lower().startswith("javascript")
        assert "src" not in attrs
    # The only hx- attributes are those of our own citation link.
    hx = [attrs for _, attrs in elements if any(name.startswith("hx-") for name in attrs)]
    own = {"class": "cite", "href": hx[0]["href"], "hx-get": hx[0]["href"]}
    assert hx == [{**own, "hx-target": "#passage", "tabindex": "-1"}]


def test_markdown_lists_bold_and_headings_render(owner, notebook):
    html, _ = _render(owner, notebook, "# Otters\n\n- **Hands** are held [1].\n- *Sleep* too.")

    assert "<h3>Otters</h3>" in html
    assert "<ul>" in html
    assert "<li><strong>Hands</strong> are held <a " in html
    assert "<em>Sleep</em>" in html


def test_a_web_link_keeps_its_href_and_gets_a_safe_rel(owner, notebook):
    html, _ = _render(owner, notebook, "See [the paper](https://example.org/otters) [1].")

    assert (
        '<a href="https://example.org/otters" rel="noopener noreferrer nofollow">the paper</a>'
        in html
    )


def test_markers_still_link_after_rendering(owner, notebook):
    html, cited = _render(owner, notebook, "**Otters** hold hands [1].")
    url = reverse("notebooks:citation", args=[notebook.pk, cited.pk])

    assert (
        f'<a class="cite" href="{url}" hx-get="{url}" hx-target="#passage" tabindex="-1">[1]</a>'
        in html
    )


def test_weak_marker_keeps_its_class(owner, notebook):
    _, cited = _render(owner, notebook, "Otters hold hands [1].")
    Citation.objects.filter(pk=cited.pk).update(supported=False)

    html = str(link_citations(Message.objects.get(pk=cited.message_id)))

    assert 'class="cite cite-weak"' in html


def test_markers_in_code_or_in_a_link_stay_text(owner, notebook):
    html, _ = _render(owner, notebook, "Use `x[1]` and [see [1]](https://example.org/).")

    assert "<code>x[1]</code>" in html
    assert 'hx-get="' not in html


def test_the_page_shows_the_rendered_answer_and_the_question_as_text(client, owner, notebook):
    cited = make_cited_answer(
        notebook=notebook,
        source=make_source(owner=owner, notebook=notebook),
        content="**Otters** hold hands [1].",
    )
    Message.objects.filter(conversation=cited.message.conversation, role="user").update(
        content="Is **this** <b>bold</b>?"
    )
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert "<strong>Otters</strong>" in response.text
    assert "Is **this** &lt;b&gt;bold&lt;/b&gt;?" in response.text
