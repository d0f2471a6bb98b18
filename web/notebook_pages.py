"""The request type of every signed-in page, the one way a page finds its notebook, and the
passage behind any [n] (an answer's, a note's, a generated document's)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.middleware import HtmxDetails

from citations.models import CitedPassage
from generation.passage_units import reflow
from library.models import Source
from notebooks.models import Notebook
from sharing import access
from sharing.models import Role
from web.forms import PageTurnForm


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
    user: User  # every view that takes one is @login_required


def get_notebook_for_user(
    request: HtmxHttpRequest, notebook_id: int, need: Role = Role.VIEWER
) -> Notebook:
    """The notebook if the signed-in user may do what `need` stands for in it: 404 for
    anyone who may not read it (other people's notebooks cannot even be told apart from
    ones that do not exist), 403 for a member whose role is too small (sharing/access.py)."""
    return access.get_notebook(request.user, notebook_id, need)


def render_citation(
    request: HtmxHttpRequest,
    notebook: Notebook,
    cited: CitedPassage,
    *,
    url: str,
    image_query: str,
) -> HttpResponse:
    """The passage behind any [n], an answer's or a generated document's (studio): a page,
    or for htmx the panel. `url` is this citation's own address (for turning PDF pages) and
    `image_query` what page_image needs to highlight its quote."""
    # A source removed from the notebook (or deleted) must not show its text here: the
    # reader would take it for a passage of this notebook.
    source_linked = (
        cited.source_id is not None
        and access.notebook_links(notebook).filter(source_id=cited.source_id).exists()
    )
    turn = PageTurnForm(request.GET)
    context = {
        "notebook": notebook,
        "citation": cited,
        "source_linked": source_linked,
        "passage_parts": _highlight(cited),
        "page_view": _page_view(cited, turn.requested()) if source_linked else None,
        "citation_url": url,
        "image_query": image_query,
    }
    template = "notebooks/citation.html#passage" if request.htmx else "notebooks/citation.html"
    if request.htmx and turn.turned():  # turning the pages under the passage
        template = "notebooks/citation.html#page_view"
    return render(request, template, context)


def _page_view(cited: CitedPassage, requested: str) -> dict[str, Any] | None:
    """The PDF page shown under a citation: the cited page, or the one the reader turned
    to; None when there is no page to show."""
    source = cited.source
    if source is None or source.kind != Source.Kind.PDF or not source.file:
        return None
    if not cited.page or not source.page_count:
        return None
    page = cited.page
    if requested.isdigit() and 1 <= int(requested) <= source.page_count:
        page = int(requested)
    return {
        "source": source,
        "page": page,
        "page_count": source.page_count,
        "highlighted": page == cited.page,
        "previous": page - 1 if page > 1 else None,
        "next": page + 1 if page < source.page_count else None,
    }


def _highlight(cited: CitedPassage) -> tuple[str, str, str] | None:
    """The cited chunk split around its quote (before, quote, after), or None when the
    chunk is gone or no longer holds the quote verbatim (it was re-processed). A PDF's
    lines are reflowed into paragraphs: the panel is narrower than the page, and the page's
    own line ends would break its lines a second time."""
    chunk = cited.chunk
    if chunk is None or not cited.quote:
        return None
    start = chunk.text.find(cited.quote)
    if start < 0:
        return None
    end = start + len(cited.quote)
    shown = chunk.text
    if cited.source is not None and cited.source.kind == Source.Kind.PDF:
        shown = reflow(chunk.text, section=tuple(chunk.section or ()))
    return shown[:start], shown[start:end], shown[end:]
