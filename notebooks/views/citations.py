"""The passage behind an [n] (an answer's or a note's) and the page picture it highlights."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from citations.lookup import cited_passage
from ingest.page_images import PageNotRendered, cited_page_png
from notebooks.models import Citation, NoteCitation
from sharing import access
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user, render_citation


@login_required
@require_GET
def citation(request: HtmxHttpRequest, notebook_id: int, citation_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id)
    cited = get_object_or_404(
        Citation,
        pk=citation_id,
        message__conversation__in=access.visible_conversations(request.user, notebook),
    )
    return render_citation(
        request,
        notebook,
        cited,
        url=reverse("notebooks:citation", args=[notebook.pk, cited.pk]),
        image_query=f"citation={cited.pk}",
    )


@login_required
@require_GET
def note_citation(
    request: HtmxHttpRequest, notebook_id: int, note_citation_id: int
) -> HttpResponse:
    """The passage behind an [n] of a note, in the same panel as an answer's."""
    notebook = get_notebook_for_user(request, notebook_id)
    cited = get_object_or_404(
        NoteCitation,
        pk=note_citation_id,
        note__in=access.visible_notes(request.user, notebook),
    )
    return render_citation(
        request,
        notebook,
        cited,
        url=reverse("notebooks:note_citation", args=[notebook.pk, cited.pk]),
        image_query=f"note_citation={cited.pk}",
    )


@login_required
@require_GET
def page_image(
    request: HtmxHttpRequest, notebook_id: int, source_id: int, page: int
) -> HttpResponse:
    """A page of a PDF in the notebook as a PNG; `?citation=<id>` (or `note_citation`,
    `document_citation`) highlights that citation's quote when it cites this page."""
    notebook = get_notebook_for_user(request, notebook_id)
    source = get_object_or_404(access.notebook_sources(notebook), pk=source_id)
    cited = cited_passage(request.user, notebook, request.GET)
    try:
        png = cited_page_png(source, page, cited)
    except PageNotRendered as exc:
        raise Http404("This page could not be rendered.") from exc
    response = HttpResponse(png, content_type="image/png")
    # The file behind a source never changes (its name is its hash), but access can end.
    patch_cache_control(response, private=True, max_age=3600)
    return response
