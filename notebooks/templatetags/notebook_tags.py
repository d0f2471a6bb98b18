from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from django import template
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from citations.models import CitedPassage
from generation.citations import CLOSING_RE, uncited_spans
from library.models import Source
from notebooks.models import Message, Note, SourceGuide
from notebooks.rendering import link_markers, render_markdown

register = template.Library()

# Answers are stored with single, densely numbered markers ("[1][2]", never "[1, 2]").
MARKER_RE = re.compile(r"\[(\d+)\]")


# The places ingest/loaders/pptx.py and sheets.py give a slide's and a sheet's passages,
# stored in English and shown in the reader's language.
_SLIDE_LABEL = re.compile(r"^slide (\d+)$")
_ROWS_LABEL = re.compile(r"^rows (\S+)$")


def _document_place(cited: CitedPassage) -> str:
    """A slide's or a sheet's place ("slide 7", "rows 12–40"); "" for a PDF's page."""
    if not cited.page_label or cited.source is None:
        return ""
    if cited.source.kind == Source.Kind.PDF:
        return ""
    if match := _SLIDE_LABEL.match(cited.page_label):
        return _("slide %(number)s") % {"number": match.group(1)}
    if match := _ROWS_LABEL.match(cited.page_label):
        return _("rows %(rows)s") % {"rows": match.group(1)}
    return ""


@register.filter
def cited_is_document_place(cited: CitedPassage) -> bool:
    """Whether the passage is on a slide or in a sheet's rows rather than a page."""
    return bool(_document_place(cited))


@register.filter
def cited_place(cited: CitedPassage) -> str:
    """Where a citation's passage is: "page 13", or "p. 5 · PDF page 13" where the page
    prints 5, "slide 7" or a sheet's "rows 12–40"; "" for a source without pages."""
    if not cited.page:
        return ""
    if place := _document_place(cited):
        return place
    printed = cited.page_label
    if printed:
        return _("p. %(label)s · PDF page %(page)s") % {"label": printed, "page": cited.page}
    return _("page %(page)s") % {"page": cited.page}


@register.filter
def cited_page_number(cited: CitedPassage) -> str:
    """The page as the passage panel's "Page" shows it: "13", or "5 · PDF page 13"; a
    slide's or a sheet's place as `cited_place` says it."""
    if place := _document_place(cited):
        return place
    printed = cited.page_label
    if printed:
        return _("%(label)s · PDF page %(page)s") % {"label": printed, "page": cited.page}
    return str(cited.page or "")


@register.filter
def cited_section(cited: CitedPassage) -> str:
    """The section of the document the cited passage is in ("Network setup › 5.5 Wi-Fi");
    "" when the document shows none or the chunk has been replaced."""
    return " › ".join(cited.section)


@register.filter
def link_citations(message: Message) -> SafeString:
    """The message's text as safe HTML, with each [n] that has a citation turned into a link
    that opens the cited passage in the side panel. Other brackets stay plain text.

    A model's answer is Markdown, rendered and sanitised (notebooks.rendering); any other
    message (an extractive answer quotes the sources) is escaped plain text."""
    notebook_id = message.conversation.notebook_id
    citations = {cited.n: cited for cited in message.citations.all()}
    text = message.content
    attributed: set[int] = set()
    if message.mode == Message.Mode.LLM:
        # A model's sentence without a marker is one no passage supports (Loupe gave the
        # others one, generation.citations.attribute_sentences): it gets a visible mark.
        for start, end in reversed(uncited_spans(text, len(citations))):
            closing = CLOSING_RE.search(text[start:end])
            cut = start + closing.start() if closing else end
            text = text[:cut] + UNSUPPORTED_MARK + text[cut:]
        attributed = attributed_numbers(message)
    return linked_text(
        text,
        citations,
        lambda cited: reverse("notebooks:citation", args=[notebook_id, cited.pk]),
        markdown=message.mode == Message.Mode.LLM,
        attributed=attributed,
        # The list under the answer links each passage once: the keyboard goes there, not
        # through every [n] of every answer on its way to the question box.
        tabbable=False,
    )


# Put into the text before it is rendered, turned into markup after (the "?" is not a
# marker MARKER_RE links).
UNSUPPORTED_MARK = " [?]"
MARK_RE = re.compile(r"\[(\d+|\?)\]")


@register.filter
def attributed_numbers(message: Message) -> set[int]:
    """The numbers of the message's citations Loupe placed, not the model."""
    if message.mode != Message.Mode.LLM:
        return set()
    return {cited.n for cited in message.citations.all() if cited.attributed}


@register.filter
def no_supported_sentence(message: Message) -> bool:
    """A model's answer none of whose sentences a passage supports: shown as such, not as
    an answer from the sources."""
    if message.mode != Message.Mode.LLM:
        return False
    return not any(cited.supported for cited in message.citations.all())


@register.filter
def unshouted(topic: str) -> str:
    """A topic the document prints in capitals ("NETWORK SETUP", "INTRODUCTION") in sentence
    case, as the guide's other topics are; a short word alone ("APT") is likely an acronym
    and stays. An acronym inside a shouted heading is lowered with it: a guess either way."""
    if not topic.isupper() or (" " not in topic.strip() and len(topic.strip()) <= 5):
        return topic
    return topic[:1] + topic[1:].lower()


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
    attributed: set[int] | None = None,
    tabbable: bool = True,
) -> SafeString:
    """`text` as safe HTML with each [n] of `citations` a link (to `url(citation)`) that
    opens the passage in the side panel: answers and generated documents (studio) alike.
    Not `tabbable`: out of the tab order, where a list beside the text links the same."""

    def link(match: re.Match[str]) -> str:
        if match.group(1) == "?":
            return format_html(
                '<span class="unsupported-mark" title="{}">[?]</span>',
                _("No passage supports this sentence"),
            )
        cited = citations.get(int(match.group(1)))
        if cited is None:
            return match.group(0)
        weak = cited.supported is False  # None: stored before citations were checked
        placed = cited.n in (attributed or set())
        classes = ["cite"] + ["cite-weak"] * weak + ["cite-attributed"] * placed
        # The title goes in as markup made by format_html: as a plain string argument its
        # quotes would be escaped and break the tag.
        titles = []
        if weak:
            titles.append(_("Weakly supported: the passage does not clearly say this"))
        if placed:
            titles.append(_("Placed by Loupe, not the model: this passage holds the sentence"))
        title = format_html(' title="{}"', " ".join(titles)) if titles else ""
        if not tabbable:
            title = format_html('{} tabindex="-1"', title)
        return format_html(
            '<a class="{2}" href="{0}" hx-get="{0}" hx-target="#passage"{3}>{1}</a>',
            url(cited),
            match.group(0),
            " ".join(classes),
            title,
        )

    # Escaping and sanitising leave "[", "]", "?" and digits alone, so the markers survive
    # them, and every piece of markup added afterwards is built by format_html.
    pattern = MARK_RE if attributed is not None else MARKER_RE
    if markdown:
        return mark_safe(link_markers(render_markdown(text), pattern, link))
    return mark_safe(pattern.sub(link, escape(text)))
