"""Studio documents: made by a worker from the notebook's sources; their status, their data
and their files (Markdown, CSV, SVG, MP3, a deck's PPTX and PDF, a video's MP4)."""

from __future__ import annotations

from datetime import datetime

from django.http import FileResponse, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema, Status

from api.auth import WRITE, ApiRequest
from api.errors import BILLED, COMMON, ApiError, ErrorOut
from api.v1.common import billed, get_notebook
from api.v1.schemas import (
    WORDS,
    DocumentDetailOut,
    DocumentIn,
    DocumentOut,
    citation_out,
    document_content,
    document_out,
)
from generation.documents.kinds import kind_module
from generation.documents.models import GeneratedDocument, SlideRevision
from generation.documents.services import (
    DocumentBusy,
    NoSourceChosen,
    NoSuchQuestion,
    NoSuchSlide,
    RevisionBusy,
    check_quiz_answer,
    delete_document,
    document_svg,
    request_document,
    request_slide_revision,
    retry_document,
)
from generation.documents.services import table_csv as make_table_csv
from retrieval.chosen_sources import source_choice
from sharing import access
from sharing.models import Role
from texts import shown
from texts.errors import UserFacingError

router = Router(tags=["studio"])

Kind = GeneratedDocument.Kind


def _document(request: ApiRequest, notebook_id: int, document_id: int) -> GeneratedDocument:
    notebook = get_notebook(request, notebook_id)
    return get_object_or_404(
        GeneratedDocument.objects.prefetch_related("citations__chunk"),
        pk=document_id,
        notebook=notebook,
    )


def _ready(document: GeneratedDocument, *kinds: str) -> None:
    if document.status != GeneratedDocument.Status.READY:
        raise ApiError(409, "not_ready", f"The document is {document.status}, not ready yet.")
    if kinds and document.kind not in kinds:
        raise ApiError(404, "not_found", f"A {document.kind} has no such file.")


def _file(text: str, content_type: str) -> HttpResponse:
    return HttpResponse(text, content_type=content_type)


@router.get(
    "/notebooks/{notebook_id}/documents",
    response={200: list[DocumentOut], **COMMON},
    summary="The notebook's studio documents",
)
def list_documents(request: ApiRequest, notebook_id: int) -> list[dict]:
    notebook = get_notebook(request, notebook_id)
    return [
        document_out(document, request.user.pk)
        for document in GeneratedDocument.objects.filter(notebook=notebook)
    ]


@router.post(
    "/notebooks/{notebook_id}/documents",
    response={202: DocumentOut, 409: ErrorOut, **BILLED},
    auth=WRITE,
    summary="Make a studio document from the sources you chose (queued; poll its status)",
)
def add_document(request: ApiRequest, notebook_id: int, payload: DocumentIn) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    # As on the page: the audio options mean something for an overview only.
    audio = payload.kind == Kind.AUDIO
    video = payload.kind == Kind.VIDEO
    billed(request, "generate")
    try:
        document = request_document(
            user=request.user,
            notebook=notebook,
            kind=payload.kind,
            language=payload.language,
            chosen_sources=source_choice(user=request.user, notebook=notebook).searched,
            audio_format=payload.audio_format if audio else "",
            length=payload.length if audio else "",
            video_format=payload.video_format if video else "",
        )
    except NoSourceChosen as exc:
        raise ApiError(409, "no_source_chosen", str(exc)) from exc
    except UserFacingError as exc:
        raise ApiError(422, "invalid_document", str(exc), "body") from exc
    return Status(202, document_out(document, request.user.pk))


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}",
    response={200: DocumentDetailOut, **COMMON},
    summary="A document: its status, and once ready its data and citations",
)
def read_document(
    request: ApiRequest,
    notebook_id: int,
    document_id: int,
    answers: bool = Query(
        False,
        description="a quiz: include each question's answer and explanation (an answer "
        "key); without, they are left out as the page leaves them until a question is "
        "answered (POST …/quiz/{number})",
    ),
) -> dict:
    document = _document(request, notebook_id, document_id)
    return {
        **document_out(document, request.user.pk),
        "content": document_content(document, answers=answers),
        "citations": [citation_out(cited) for cited in document.citations.all()],
    }


def _file_responses(content_type: str) -> dict:
    return {
        "responses": {
            200: {
                "description": content_type,
                "content": {content_type: {"schema": {"type": "string"}}},
            }
        }
    }


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/markdown",
    response={200: None, 409: ErrorOut, **COMMON},
    summary="A ready document as Markdown, its [n] markers kept",
    openapi_extra=_file_responses("text/markdown"),
)
def markdown(request: ApiRequest, notebook_id: int, document_id: int) -> HttpResponse:
    document = _document(request, notebook_id, document_id)
    _ready(document)
    return _file(kind_module(document.kind).readable(document.data), "text/markdown; charset=utf-8")


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/csv",
    response={200: None, 409: ErrorOut, **COMMON},
    summary="A ready table as CSV",
    openapi_extra=_file_responses("text/csv"),
)
def csv(request: ApiRequest, notebook_id: int, document_id: int) -> HttpResponse:
    document = _document(request, notebook_id, document_id)
    _ready(document, Kind.TABLE)
    return _file(make_table_csv(document=document), "text/csv; charset=utf-8")


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/svg",
    response={200: None, 409: ErrorOut, **COMMON},
    summary="A ready mind map or infographic as SVG",
    openapi_extra=_file_responses("image/svg+xml"),
)
def svg(request: ApiRequest, notebook_id: int, document_id: int) -> HttpResponse:
    document = _document(request, notebook_id, document_id)
    _ready(document, Kind.MINDMAP, Kind.INFOGRAPHIC)
    response = _file(document_svg(document=document), "image/svg+xml")
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/mp3",
    response={200: None, 409: ErrorOut, **COMMON},
    summary="A ready audio overview as MP3",
    openapi_extra=_file_responses("audio/mpeg"),
)
def mp3(request: ApiRequest, notebook_id: int, document_id: int) -> FileResponse:
    document = _document(request, notebook_id, document_id)
    _ready(document, Kind.AUDIO)
    if not document.audio:
        raise ApiError(404, "not_found", "This overview has no audio.")
    return FileResponse(document.audio.open("rb"), content_type="audio/mpeg")


PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def _stored(document: GeneratedDocument, field: str, content_type: str) -> FileResponse:
    stored = getattr(document, field)
    if not stored:
        raise ApiError(404, "not_found", f"This {document.kind} has no such file.")
    return FileResponse(stored.open("rb"), content_type=content_type)


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/pptx",
    response={200: None, 409: ErrorOut, **COMMON},
    summary="A ready slide deck as PPTX, the passages each slide cites as its footnotes",
    openapi_extra=_file_responses(PPTX),
)
def pptx(request: ApiRequest, notebook_id: int, document_id: int) -> FileResponse:
    document = _document(request, notebook_id, document_id)
    _ready(document, Kind.SLIDES)
    return _stored(document, "pptx", PPTX)


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/pdf",
    response={200: None, 409: ErrorOut, **COMMON},
    summary="A ready slide deck as PDF, the passages each slide cites as its footnotes",
    openapi_extra=_file_responses("application/pdf"),
)
def pdf(request: ApiRequest, notebook_id: int, document_id: int) -> FileResponse:
    document = _document(request, notebook_id, document_id)
    _ready(document, Kind.SLIDES)
    return _stored(document, "pdf", "application/pdf")


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/mp4",
    response={200: None, 409: ErrorOut, **COMMON},
    summary="A ready video overview as MP4 (H.264 + AAC, 1280x720)",
    openapi_extra=_file_responses("video/mp4"),
)
def mp4(request: ApiRequest, notebook_id: int, document_id: int) -> FileResponse:
    document = _document(request, notebook_id, document_id)
    _ready(document, Kind.VIDEO)
    return _stored(document, "video", "video/mp4")


@router.delete(
    "/notebooks/{notebook_id}/documents/{document_id}",
    response={204: None, **COMMON},
    auth=WRITE,
    summary="Delete a document you made (or any, as the notebook's owner)",
)
def remove_document(request: ApiRequest, notebook_id: int, document_id: int) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    document = get_object_or_404(GeneratedDocument, pk=document_id, notebook=notebook)
    if not access.may_manage_document(request.user, notebook, document):
        raise ApiError(403, "forbidden", "Only whoever made it, or the notebook's owner, can.")
    delete_document(document=document)
    return Status(204, None)


@router.post(
    "/notebooks/{notebook_id}/documents/{document_id}/retry",
    response={202: DocumentOut, 409: ErrorOut, **BILLED},
    auth=WRITE,
    summary="Make a document of yours again, from the sources as they are now",
)
def retry(request: ApiRequest, notebook_id: int, document_id: int) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    document = get_object_or_404(GeneratedDocument, pk=document_id, notebook=notebook)
    billed(request, "generate")  # as the page's decorators, before the service's rules
    try:
        document = retry_document(document=document, user=request.user)
    except DocumentBusy as exc:
        raise ApiError(409, "document_busy", str(exc)) from exc
    return Status(202, document_out(document, request.user.pk))


class RevisionIn(Schema):
    instruction: str = Field(
        ..., max_length=500, description='how to revise it, e.g. "shorter"', pattern=WORDS
    )


class RevisionOut(Schema):
    id: int
    number: int = Field(description="the slide, from 1")
    instruction: str
    status: str = Field(description="queued, processing, ready (the slide is revised), failed")
    stage: str = Field(description='revising, rendering, indexing; "" when done')
    error: str = Field(description="why it failed (the slide stays as it was)")
    created_at: datetime
    updated_at: datetime


def _revision_out(revision: SlideRevision) -> dict:
    return {
        "id": revision.pk,
        "number": revision.number,
        "instruction": revision.instruction,
        "status": revision.status,
        "stage": revision.stage,
        "error": shown(revision.error, revision.error_i18n),
        "created_at": revision.created_at,
        "updated_at": revision.updated_at,
    }


@router.post(
    "/notebooks/{notebook_id}/documents/{document_id}/slides/{number}/revisions",
    response={202: RevisionOut, 409: ErrorOut, **BILLED},
    auth=WRITE,
    summary="Revise one slide of a deck (queued; poll the revision's status)",
)
def revise_slide(
    request: ApiRequest, notebook_id: int, document_id: int, number: int, payload: RevisionIn
) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    document = get_object_or_404(GeneratedDocument, pk=document_id, notebook=notebook)
    if not access.may_manage_document(request.user, notebook, document):
        raise ApiError(403, "forbidden", "Only whoever made it, or the notebook's owner, can.")
    billed(request, "generate")
    try:
        revision = request_slide_revision(
            document=document, number=number, instruction=payload.instruction, user=request.user
        )
    except NoSuchSlide as exc:
        raise ApiError(404, "not_found", str(exc)) from exc
    except RevisionBusy as exc:
        raise ApiError(409, "revision_busy", str(exc)) from exc
    except UserFacingError as exc:
        raise ApiError(422, "invalid_revision", str(exc), "body") from exc
    return Status(202, _revision_out(revision))


@router.get(
    "/notebooks/{notebook_id}/documents/{document_id}/revisions/{revision_id}",
    response={200: RevisionOut, **COMMON},
    summary="A slide revision's status; once ready, the deck holds the revised slide",
)
def read_revision(
    request: ApiRequest, notebook_id: int, document_id: int, revision_id: int
) -> dict:
    document = _document(request, notebook_id, document_id)
    return _revision_out(get_object_or_404(SlideRevision, pk=revision_id, document=document))


class QuizAnswerIn(Schema):
    answer: str = Field(
        ...,
        max_length=2000,
        description="a multiple-choice question: the option's index (from 0); else the text",
    )


class QuizResultOut(Schema):
    number: int
    correct: bool
    expected: str = Field(description="the right option or answer")
    explanation: str


@router.post(
    "/notebooks/{notebook_id}/documents/{document_id}/quiz/{number}",
    response={200: QuizResultOut, 409: ErrorOut, **COMMON},
    summary="Check your answer to a ready quiz's question `number` (from 1)",
    description="Checked as the quiz page checks it: a short answer may word it differently.",
)
def check_answer(
    request: ApiRequest, notebook_id: int, document_id: int, number: int, payload: QuizAnswerIn
) -> dict:
    document = _document(request, notebook_id, document_id)
    _ready(document, Kind.QUIZ)
    try:
        result = check_quiz_answer(document=document, number=number, response=payload.answer)
    except NoSuchQuestion as exc:
        raise ApiError(404, "not_found", str(exc)) from exc
    except UserFacingError as exc:  # an answer of the wrong form
        raise ApiError(422, "invalid_input", str(exc), "body.answer") from exc
    return {
        "number": result.number,
        "correct": result.correct,
        "expected": result.expected,
        "explanation": result.explanation,
    }
