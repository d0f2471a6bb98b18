from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from django import template
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from library.models import Source
from notebooks.models import CitedPassage, Message, Note, SourceGuide
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
    return linked_text(
        message.content,
        {cited.n: cited for cited in message.citations.all()},
        lambda cited: reverse("notebooks:citation", args=[notebook_id, cited.pk]),
        markdown=message.mode == Message.Mode.LLM,
    )


@register.filter
def guide_of(guides: Mapping[int, SourceGuide], source: Source) -> SourceGuide | None:
    """The source's guide among the page's (notebooks/guides.py), None without one."""
    return guides.get(source.pk) if guides else None


@register.filter
def note_html(note: Note) -> SafeString:
    """A note's Markdown as safe HTML (rendered and sanitised as an answer is), with each [n]
    it kept from the answer it was saved from opening that passage."""
    return linked_text(
        note.content,
        {cited.n: cited for cited in note.citations.all()},
        lambda cited: reverse("notebooks:note_citation", args=[note.notebook_id, cited.pk]),
        markdown=True,
    )


def linked_text(
    text: str,
    citations: Mapping[int, CitedPassage],
    url: Callable[[CitedPassage], str],
    *,
    markdown: bool,
) -> SafeString:
    """`text` as safe HTML with each [n] of `citations` a link (to `url(citation)`) that
    opens the passage in the side panel: answers and generated documents (studio) alike."""

    def link(match: re.Match[str]) -> str:
        cited = citations.get(int(match.group(1)))
        if cited is None:
            return match.group(0)
        weak = cited.supported is False  # None: stored before citations were checked
        # The title goes in as markup made by format_html: as a plain string argument its
        # quotes would be escaped and break the tag.
        title = (
            format_html(' title="{}"', _("Weakly supported: the passage does not clearly say this"))
            if weak
            else ""
        )
        return format_html(
            '<a class="{2}" href="{0}" hx-get="{0}" hx-target="#passage"{3}>{1}</a>',
            url(cited),
            match.group(0),
            "cite cite-weak" if weak else "cite",
            title,
        )

    # Escaping and sanitising leave "[", "]" and digits alone, so the markers survive them,
    # and every piece of markup added afterwards is built by format_html.
    if markdown:
        return mark_safe(link_markers(render_markdown(text), MARKER_RE, link))
    return mark_safe(MARKER_RE.sub(link, escape(text)))
