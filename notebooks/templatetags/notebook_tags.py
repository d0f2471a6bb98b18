from __future__ import annotations

import re

from django import template
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from notebooks.models import Message

register = template.Library()

# Answers are stored with single, densely numbered markers ("[1][2]", never "[1, 2]").
MARKER_RE = re.compile(r"\[(\d+)\]")


@register.filter
def link_citations(message: Message) -> SafeString:
    """The message's text, escaped, with each [n] that has a citation turned into a link
    that opens the cited passage in the side panel. Other brackets stay plain text."""
    notebook_id = message.conversation.notebook_id
    urls = {
        cited.n: reverse("notebooks:citation", args=[notebook_id, cited.pk])
        for cited in message.citations.all()
    }

    def link(match: re.Match[str]) -> str:
        url = urls.get(int(match.group(1)))
        if url is None:
            return match.group(0)
        return format_html(
            '<a class="cite" href="{0}" hx-get="{0}" hx-target="#passage">{1}</a>',
            url,
            match.group(0),
        )

    # Escaping leaves "[", "]" and digits alone, so the markers survive it, and every
    # piece of markup added afterwards is built by format_html.
    return mark_safe(MARKER_RE.sub(link, escape(message.content)))
