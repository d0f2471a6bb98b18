from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language_info

from citations.models import CitedPassage
from generation.documents.kinds import KINDS, WITHOUT_A_MODEL, offered
from generation.documents.models import GeneratedDocument, SlideRevision
from generation.documents.services import LANGUAGES, document_svg
from notebooks.models import Notebook
from notebooks.templatetags.notebook_tags import linked_text
from providers.chat import chat_available

register = template.Library()


@register.simple_tag
def studio_context(notebook: Notebook) -> dict[str, Any]:
    """What the studio panel shows: the notebook's documents, and whether to keep polling
    (while one is queued, being made or being indexed)."""
    documents = list(GeneratedDocument.objects.filter(notebook=notebook))
    return {
        "documents": documents,
        "polling": any(not document.is_finished or document.stage for document in documents),
        "kinds": [
            (kind, GeneratedDocument.Kind(kind).label)
            for kind in offered(with_a_model=chat_available())
        ],
        # Without a model: the kinds it would make of sentence fragments, named in the panel.
        "need_a_model": []
        if chat_available()
        else [GeneratedDocument.Kind(kind).label for kind in KINDS if kind not in WITHOUT_A_MODEL],
        # Named in the reader's language (Django's own names); LANGUAGES names them for
        # the model's prompt, in English.
        "languages": [(code, get_language_info(code)["name_translated"]) for code in LANGUAGES],
        "audio_formats": GeneratedDocument.AudioFormat.choices,
        "lengths": GeneratedDocument.Length.choices,
        "video_formats": GeneratedDocument.VideoFormat.choices,
        # Without one, a document quotes the sources and cannot be in another language.
        "chat_model": chat_available(),
    }


def _links(text: str, document: GeneratedDocument, *, markdown: bool) -> SafeString:
    def url(cited: CitedPassage) -> str:
        return reverse("studio:citation", args=[document.notebook_id, document.pk, cited.pk])

    citations = {cited.n: cited for cited in document.citations.all()}
    placed = {cited.n for cited in citations.values() if cited.attributed}
    return linked_text(text, citations, url, markdown=markdown, attributed=placed)


@register.filter
def cited(text: str, document: GeneratedDocument) -> SafeString:
    """Plain text (escaped) with the document's [n] linked to their passages."""
    return _links(text, document, markdown=False)


@register.filter
def cited_markdown(text: str, document: GeneratedDocument) -> SafeString:
    """Markdown rendered and sanitised, with the document's [n] linked to their passages."""
    return _links(text, document, markdown=True)


@register.filter
def drawing(document: GeneratedDocument) -> SafeString:
    """The mind map's or infographic's SVG, to inline: built by generation/documents/svg.py,
    where every text is escaped."""
    return mark_safe(document_svg(document=document))


@register.simple_tag
def slide_revision(document: GeneratedDocument, number: int) -> SlideRevision | None:
    """The latest revision asked of slide `number` of the deck, or None: the slide shows
    it while it is under way, and its reason when it failed."""
    latest = getattr(document, "_latest_revisions", None)
    if latest is None:
        latest = {}
        for revision in document.slide_revisions.all():  # newest first
            latest.setdefault(revision.number, revision)
        document._latest_revisions = latest  # type: ignore[attr-defined]
    return latest.get(number)
