from __future__ import annotations

import re

from django import template
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from notebooks.models import Message
from notebooks.rendering import link_markers, render_markdown

register = template.Library()

# Answers are stored with single, densely numbered markers ("[1][2]", never "[1, 2]").
MARKER_RE = re.compile(r"\[(\d+)\]")


@register.filter
def link_citations(message: Message) -> SafeString:
    """The message's text as safe HTML, with each [n] that has a citation turned into a link
    that opens the cited passage in the side panel. Other brackets stay plain text.

    A model's answer is Markdown, rendered and sanitised (notebooks.rendering); any other
    message (an extractive answer quotes the sources) is escaped plain text."""
    notebook_id = message.conversation.notebook_id
    citations = {cited.n: cited for cited in message.citations.all()}

    def link(match: re.Match[str]) -> str:
        cited = citations.get(int(match.group(1)))
        if cited is None:
            return match.group(0)
        weak = cited.supported is False  # None: stored before citations were checked
        return format_html(
            '<a class="{2}" href="{0}" hx-get="{0}" hx-target="#passage"{3}>{1}</a>',
            reverse("notebooks:citation", args=[notebook_id, cited.pk]),
            match.group(0),
            "cite cite-weak" if weak else "cite",
            ' title="Weakly supported: the passage does not clearly say this"' if weak else "",
        )

    # Escaping and sanitising leave "[", "]" and digits alone, so the markers survive them,
    # and every piece of markup added afterwards is built by format_html.
    if message.mode == Message.Mode.LLM:
        return mark_safe(link_markers(render_markdown(message.content), MARKER_RE, link))
    return mark_safe(MARKER_RE.sub(link, escape(message.content)))
