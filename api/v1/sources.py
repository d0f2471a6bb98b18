"""A notebook's sources: upload, add a web page, status and progress, read again, remove,
and which of them the caller's questions use."""

from __future__ import annotations

from typing import Literal

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.cache import patch_cache_control
from ninja import Field, File, Form, Query, Router, Schema, Status, UploadedFile

from api.auth import WRITE, ApiRequest
from api.errors import BILLED, COMMON, ApiError, ErrorOut
from api.v1.common import billed, get_notebook
from api.v1.schemas import AddedOut, ChosenIn, ChosenOut, SourceOut, UrlIn, source_out
from citations.lookup import cited_passage
from ingest.page_images import PageNotRendered, cited_page_png
from ingest.services import SourceBusy, UploadRejected, add_source, add_url, reprocess_source
from library.models import Preferences
from notebooks.services import SourceNotRemovable, unlink_source
from retrieval.chosen_sources import choose_sources, source_choice
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError

router = Router(tags=["sources"])


@router.get(
    "/notebooks/{notebook_id}/sources",
    response={200: list[SourceOut], **COMMON},
    summary="The notebook's sources, with status and progress",
)
def list_sources(request: ApiRequest, notebook_id: int) -> list[dict]:
    notebook = get_notebook(request, notebook_id)
    choice = source_choice(user=request.user, notebook=notebook)
    return [source_out(source, ticked=source.pk not in choice.unticked) for source in choice.listed]


def _source(request: ApiRequest, notebook_id: int, source_id: int, need: Role = Role.VIEWER):
    notebook = get_notebook(request, notebook_id, need)
    return notebook, get_object_or_404(access.notebook_sources(notebook), pk=source_id)


@router.post(
    "/notebooks/{notebook_id}/sources",
    response={201: AddedOut, 413: ErrorOut, **BILLED},
    auth=WRITE,
    summary="Upload a file (multipart, field `file`)",
)
def upload(
    request: ApiRequest,
    notebook_id: int,
    file: File[UploadedFile],
    pdf_capture: Form[Literal["", "auto", "text", "vision"]] = "",
) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    billed(request, "upload")
    try:
        added = add_source(
            owner=request.user,
            notebook=notebook,
            upload=file,
            pdf_capture=pdf_capture or Preferences.of(request.user).pdf_capture,
        )
    except UploadRejected as exc:
        raise ApiError(400, "upload_rejected", str(exc), "file") from exc
    return Status(201, {"created": added.created, "source": source_out(added.source)})


@router.post(
    "/notebooks/{notebook_id}/sources/url",
    response={201: AddedOut, **BILLED},
    auth=WRITE,
    summary="Add a web page",
)
def add_web_page(request: ApiRequest, notebook_id: int, payload: UrlIn) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    billed(request, "upload")
    try:
        added = add_url(
            owner=request.user,
            notebook=notebook,
            url=payload.url,
            pdf_capture=Preferences.of(request.user).pdf_capture,
        )
    except UploadRejected as exc:
        raise ApiError(400, "url_rejected", str(exc), "body.url") from exc
    return Status(201, {"created": added.created, "source": source_out(added.source)})


@router.post(
    "/notebooks/{notebook_id}/sources/{source_id}/reprocess",
    response={202: SourceOut, 409: ErrorOut, **BILLED},
    auth=WRITE,
    summary="Read a source again (or retry a failed one)",
)
def reprocess(request: ApiRequest, notebook_id: int, source_id: int) -> Status:
    _notebook, source = _source(request, notebook_id, source_id, Role.EDITOR)
    access.require_changeable(request.user, source)
    billed(request, "upload")
    try:
        source = reprocess_source(source=source)
    except SourceBusy as exc:
        raise ApiError(409, "source_busy", str(exc)) from exc
    return Status(202, source_out(source))


@router.put(
    "/notebooks/{notebook_id}/sources/chosen",
    response={200: ChosenOut, **COMMON},
    auth=WRITE,
    summary="Choose the sources your questions and documents use",
)
def choose(request: ApiRequest, notebook_id: int, payload: ChosenIn) -> dict:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    try:
        choice = choose_sources(user=request.user, notebook=notebook, ticked=payload.ticked)
    except UserFacingError as exc:
        # Ids that are not this notebook's sources, someone else's among them: not found.
        raise ApiError(404, "not_found", str(exc), "body.ticked") from exc
    return {"ticked": [source.pk for source in choice.listed if source.pk not in choice.unticked]}


# After the fixed paths (url, chosen): Django tries the patterns in order.
@router.get(
    "/notebooks/{notebook_id}/sources/{source_id}",
    response={200: SourceOut, **COMMON},
    summary="One source: its status, stage and progress",
)
def read_source(request: ApiRequest, notebook_id: int, source_id: int) -> dict:
    notebook, source = _source(request, notebook_id, source_id)
    choice = source_choice(user=request.user, notebook=notebook)
    return source_out(source, ticked=source.pk not in choice.unticked)


@router.delete(
    "/notebooks/{notebook_id}/sources/{source_id}",
    response={204: None, **COMMON},
    auth=WRITE,
    summary="Take a source out of the notebook (it stays in your library)",
)
def remove_source(request: ApiRequest, notebook_id: int, source_id: int) -> Status:
    notebook, source = _source(request, notebook_id, source_id, Role.EDITOR)
    try:
        unlink_source(notebook=notebook, source=source)
    except SourceNotRemovable as exc:
        raise ApiError(400, "not_removable", str(exc)) from exc
    return Status(204, None)


class PageQuery(Schema):
    citation: int | None = Field(None, description="highlight this answer citation's quote")
    note_citation: int | None = Field(None, description="or this note citation's")
    document_citation: int | None = Field(None, description="or this studio document's")


@router.get(
    "/notebooks/{notebook_id}/sources/{source_id}/pages/{page}",
    response={200: None, **COMMON},
    summary="A page of a PDF source as a PNG, a citation's quote highlighted on it",
    openapi_extra={
        "responses": {200: {"description": "image/png", "content": {"image/png": {"schema": {}}}}}
    },
)
def page_image(
    request: ApiRequest, notebook_id: int, source_id: int, page: int, query: Query[PageQuery]
) -> HttpResponse:
    notebook, source = _source(request, notebook_id, source_id)
    cited = cited_passage(request.user, notebook, query.dict())
    try:
        png = cited_page_png(source, page, cited)
    except PageNotRendered as exc:
        raise ApiError(404, "not_found", str(exc)) from exc
    response = HttpResponse(png, content_type="image/png")
    patch_cache_control(response, private=True, max_age=3600)
    return response
