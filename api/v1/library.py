"""The public library: every signed-in person's to search and to add to a notebook they
edit (linked, not copied); publishing a source there, and taking it back
(sharing/services.py, as on the public library page)."""

from __future__ import annotations

from datetime import datetime

from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema, Status

from api.auth import WRITE, ApiRequest
from api.errors import COMMON, ApiError, ErrorOut
from api.v1.common import get_notebook
from api.v1.schemas import NO_NUL, AddedOut, source_out
from library.models import Source
from retrieval.chosen_sources import source_choice
from sharing import access, services
from sharing.models import Role

router = Router(tags=["library"])


class PublicSourceOut(Schema):
    id: int
    title: str
    kind: str
    summary: str
    language: str
    page_count: int | None
    chunk_count: int
    published_by: str | None
    published_at: datetime | None


class SearchIn(Schema):
    q: str = Field(
        "", max_length=200, description="words of a title, a summary or the text", pattern=NO_NUL
    )


class SourceIn(Schema):
    source: int = Field(description="a source's id")


def _public_out(source: Source) -> dict:
    return {
        "id": source.pk,
        "title": source.title,
        "kind": source.kind,
        "summary": source.summary,
        "language": source.language,
        "page_count": source.page_count,
        "chunk_count": source.chunk_count,
        "published_by": source.published_by.get_username() if source.published_by else None,
        "published_at": source.published_at,
    }


@router.get(
    "/library/public",
    response={200: list[PublicSourceOut], **COMMON},
    summary="The public library, newest first; `q` searches titles, summaries and texts",
)
def public_library(request: ApiRequest, search: Query[SearchIn]) -> list[dict]:
    query = " ".join(search.q.split())
    return [_public_out(source) for source in services.public_library(query=query)[:200]]


@router.post(
    "/library/public",
    response={201: PublicSourceOut, 409: ErrorOut, **COMMON},
    auth=WRITE,
    summary="Publish a ready source of yours (a contributor's right)",
)
def publish(request: ApiRequest, payload: SourceIn) -> Status:
    source = get_object_or_404(access.readable_sources(request.user), pk=payload.source)
    try:
        services.publish(source=source, actor=request.user)
    except services.SharingError as exc:
        raise ApiError(409, "not_ready", str(exc), "body.source") from exc
    source.refresh_from_db()
    return Status(201, _public_out(source))


@router.delete(
    "/library/public/{source_id}",
    response={204: None, **COMMON},
    auth=WRITE,
    summary="Take a source you published out of the public library",
)
def unpublish(request: ApiRequest, source_id: int) -> Status:
    source = get_object_or_404(access.readable_sources(request.user), pk=source_id)
    services.unpublish(source=source, actor=request.user)
    return Status(204, None)


@router.post(
    "/notebooks/{notebook_id}/sources/link",
    response={200: AddedOut, 201: AddedOut, **COMMON},
    auth=WRITE,
    summary="Add a source of your library, or a public one, to the notebook (not read again)",
)
def link(request: ApiRequest, notebook_id: int, payload: SourceIn) -> Status:
    # A source not theirs to link is a 404 whatever their role, as someone else's is.
    source = get_object_or_404(access.linkable_sources(request.user), pk=payload.source)
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    created = services.link_source(notebook=notebook, source=source, user=request.user)
    choice = source_choice(user=request.user, notebook=notebook)
    shown = source_out(source, ticked=source.pk not in choice.unticked)
    return Status(201 if created else 200, {"created": created, "source": shown})
