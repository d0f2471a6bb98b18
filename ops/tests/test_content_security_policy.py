"""Every page carries a strict Content-Security-Policy, and the pages need nothing it
forbids: no inline script or style, no event-handler attributes, no htmx hx-on (eval)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from notebooks.models import Conversation


class InlineCode(HTMLParser):
    """Collects what a policy without 'unsafe-inline' and 'unsafe-eval' would block."""

    def __init__(self) -> None:
        super().__init__()
        self.blocked: list[str] = []
        self.scripts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script":
            if not names.get("src"):
                self.blocked.append("<script> without src")
            self.scripts.append(names.get("src") or "")
        if tag == "style":
            self.blocked.append("<style>")
        for name, value in attrs:
            if name == "style":
                self.blocked.append(f'<{tag} style="{value}">')
            elif name.startswith("on") or name.startswith("hx-on"):
                self.blocked.append(f"<{tag} {name}=…>")
            elif name in {"href", "src", "action"} and (value or "").startswith("javascript:"):
                self.blocked.append(f"<{tag} {name}=javascript:…>")


def directives(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    parts = (part.strip().split() for part in header.split(";") if part.strip())
    return {part[0]: part[1:] for part in parts}


def assert_strict(response) -> None:
    assert response.status_code == 200
    policy = directives(response)
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    page = InlineCode()
    page.feed(response.content.decode())
    assert page.blocked == [], f"{response.wsgi_request.path}: {page.blocked}"
    assert all(src.startswith("/static/") for src in page.scripts), page.scripts


@pytest.mark.django_db
def test_the_sign_in_page_is_strict(client):
    assert_strict(client.get(reverse("login")))


@pytest.mark.django_db
def test_a_notebook_with_a_source_and_an_answer_needs_no_inline_code(
    client, fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, b"Policies keep pages honest. " * 20)
    client.force_login(owner)
    fake_openai.chat_replies.append("Pages stay honest [1].")
    client.post(reverse("notebooks:ask", args=[notebook.pk]), {"question": "Why policies?"})
    conversation = Conversation.objects.get(notebook=notebook)
    assert conversation.messages.filter(role="assistant").exists()

    for url in (
        reverse("notebooks:list"),
        reverse("notebooks:detail", args=[notebook.pk]),
        reverse("notebooks:conversation", args=[notebook.pk, conversation.pk]),
        reverse("library:library"),
        reverse("library:preferences"),
        reverse("billing:usage"),
    ):
        assert_strict(client.get(url))
