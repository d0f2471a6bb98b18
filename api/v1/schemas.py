"""What the API reads and writes, as typed schemas: its OpenAPI document is made from them."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Literal

from ninja import Field, Schema

from citations.models import CitedPassage
from generation.citations import unsupported_sentences
from generation.documents.kinds import quiz
from generation.documents.models import GeneratedDocument
from library.models import Source
from notebooks.models import Message, Note, Notebook
from texts import shown

# No NUL in any text: PostgreSQL stores none, so the schema says so (a 422 naming the field).
NO_NUL = r"^[^\x00]*$"
# ... and at least one character that is not a space: a text the service needs words in.
WORDS = r"^[^\x00]*[^\x00\s][^\x00]*$"


class NotebookIn(Schema):
    title: str = Field(..., max_length=200, pattern=WORDS)


class NotebookOut(Schema):
    id: int
    title: str
    role: Literal["owner", "editor", "viewer"]
    owner: str
    created_at: datetime


class SourceOut(Schema):
    id: int
    title: str
    kind: str = Field(
        description="pdf, text, document (Word, PowerPoint, Excel, OpenDocument, EPUB, RTF, "
        "HTML or CSV file; `reader` names which), url, image, audio, generated or note"
    )
    status: str
    stage: str = Field(
        description="what the worker is doing: fetching, reading, reading_images, "
        "transcribing, indexing; once ready (searchable by its words) summarizing, "
        'writing_guide, embedding; "" when nothing is left to do'
    )
    stage_label: str = Field(description="the stage in words, in the request's language")
    progress_done: int
    progress_total: int
    error: str
    reader: str = Field(
        description='what read the text ("Word document", "PDF text layer"), in the '
        'request\'s language; "" until it is read'
    )
    url: str
    filename: str
    page_count: int | None
    chunk_count: int
    language: str
    summary: str
    ticked: bool
    created_at: datetime


class UrlIn(Schema):
    url: str = Field(..., min_length=1, max_length=2000, pattern=NO_NUL)


class AddedOut(Schema):
    created: bool = Field(description="False: the same file or page was already in the library")
    source: SourceOut


class ChosenIn(Schema):
    ticked: list[int] = Field(description="the ids of the sources questions use; [] for none")


class ChosenOut(Schema):
    ticked: list[int]


class CitationOut(Schema):
    n: int
    source_id: int | None = Field(description="null once the source was removed")
    source_title: str
    page: int | None
    page_label: str = Field(description="the page number the page prints, when it prints one")
    section: list[str] = Field(description="the chapter and section headings above the passage")
    quote: str
    similarity: float
    supported: bool | None = Field(description="whether the passage holds the claim")


class PassageOut(Schema):
    n: int
    source_id: int
    source_title: str
    page: int | None
    page_label: str
    section: list[str]
    text: str
    similarity: float


class MessageOut(Schema):
    id: int
    role: str
    content: str = Field(description="the text, with [n] markers naming its citations")
    mode: str
    model: str
    created_at: datetime
    citations: list[CitationOut]
    unsupported: list[str] = Field(
        description="the sentences of a model's answer that no passage supports, as written "
        "(the page marks each [?]); [] when every sentence is cited, and for answers that "
        "quote the sources"
    )
    memories: list[str] = Field(
        description="the asker's remembered facts the model was given (never cited)"
    )


class ConversationOut(Schema):
    id: int
    title: str
    posted: bool
    mine: bool
    created_at: datetime


class ConversationPatch(Schema):
    title: str | None = Field(
        None, max_length=200, description='"": its first question', pattern=NO_NUL
    )
    posted: bool | None = Field(None, description="true: every reader of the notebook reads it")


class ConversationDetailOut(ConversationOut):
    messages: list[MessageOut]


class AskIn(Schema):
    question: str = Field(..., max_length=10_000, pattern=WORDS)
    conversation: int | None = Field(None, description="a conversation of yours to continue")
    source: int | None = Field(None, description="ask only this source of the notebook")


class AnswerOut(Schema):
    conversation: int
    question: MessageOut
    answer: MessageOut
    passages: list[PassageOut] = Field(description="the passages retrieved, best first")


class NoteIn(Schema):
    content: str = Field(..., max_length=50_000, pattern=WORDS)
    title: str = Field("", max_length=200, pattern=NO_NUL)


class NotePatch(Schema):
    content: str | None = Field(None, max_length=50_000, pattern=WORDS)
    title: str | None = Field(None, max_length=200, pattern=NO_NUL)
    posted: bool | None = None
    is_source: bool | None = Field(
        None, description="true: make the note a source of the notebook; false: a note only"
    )


class NoteOut(Schema):
    id: int
    title: str
    content: str
    posted: bool
    mine: bool
    source_id: int | None
    created_at: datetime
    updated_at: datetime
    citations: list[CitationOut]


DocumentKind = Literal[
    "report", "quiz", "table", "mindmap", "infographic", "audio", "flashcards", "slides", "video"
]


Language = Literal["", "en", "de", "fr", "es", "it", "nl", "pt", "pl"]


class DocumentIn(Schema):
    kind: DocumentKind
    language: Language = Field("", description='"": the sources\' language')
    audio_format: Literal["", "deep_dive", "brief", "debate"] = Field(
        "", description="an audio overview's format; ignored for other kinds"
    )
    length: Literal["", "short", "default", "long"] = ""
    video_format: Literal["", "explainer", "brief"] = Field(
        "", description="a video overview's format; ignored for other kinds"
    )


class DocumentOut(Schema):
    id: int
    kind: str
    status: str
    stage: str
    progress_done: int
    progress_total: int
    error: str
    title: str
    mode: str
    language: str
    created_at: datetime
    mine: bool


class DocumentDetailOut(DocumentOut):
    content: dict | None = Field(description="the kind's structured data, with [n] markers")
    citations: list[CitationOut]


class UsageDayOut(Schema):
    day: str
    kind: str
    model: str
    calls: int
    input_tokens: int | None
    output_tokens: int | None
    seconds: float | None
    cost: Decimal


class AccountOut(Schema):
    username: str
    credit: Decimal
    cost_total: Decimal
    calls_total: int
    token: str | None = Field(description="the name of the token used, null for a session")
    scope: Literal["read", "write"]
    usage: list[UsageDayOut]


# Rows into schemas -----------------------------------------------------------------------


def notebook_out(notebook: Notebook, role: str) -> dict:
    return {
        "id": notebook.pk,
        "title": notebook.title,
        "role": role,
        "owner": notebook.owner.get_username(),
        "created_at": notebook.created_at,
    }


def source_out(source: Source, *, ticked: bool = True) -> dict:
    return {
        "id": source.pk,
        "title": source.title,
        "kind": source.kind,
        "status": source.status,
        "stage": source.stage,
        "stage_label": str(source.get_stage_display()) if source.stage else "",
        "progress_done": source.progress_done,
        "progress_total": source.progress_total,
        "error": source.error,
        "reader": shown(source.reader, source.reader_i18n),
        "url": source.url,
        "filename": source.filename,
        "page_count": source.page_count,
        "chunk_count": source.chunk_count,
        "language": source.language,
        "summary": source.summary,
        "ticked": ticked,
        "created_at": source.created_at,
    }


def citation_out(cited: CitedPassage) -> dict:
    return {
        "n": cited.n,
        "source_id": cited.source_id,
        "source_title": cited.source_title,
        "page": cited.page,
        "page_label": cited.page_label,
        "section": cited.section,
        "quote": cited.quote,
        "similarity": cited.similarity,
        "supported": cited.supported,
    }


def message_out(message: Message) -> dict:
    return {
        "id": message.pk,
        "role": message.role,
        "content": message.content,
        "mode": message.mode,
        "model": message.model,
        "created_at": message.created_at,
        "citations": [citation_out(cited) for cited in message.citations.all()],
        "unsupported": unsupported_sentences(message),
        "memories": message.memories,
    }


def note_out(note: Note, user_id: int) -> dict:
    return {
        "id": note.pk,
        "title": note.title,
        "content": note.content,
        "posted": note.posted,
        "mine": note.user_id == user_id,
        "source_id": note.source_id,
        "created_at": note.created_at,
        "updated_at": note.updated_at,
        "citations": [citation_out(cited) for cited in note.citations.all()],
    }


def document_content(document: GeneratedDocument, *, answers: bool = False) -> dict | None:
    """A document's data; a quiz's without its answers unless they are asked for."""
    if not isinstance(document.content, dict):
        return None
    if document.kind == GeneratedDocument.Kind.QUIZ and not answers:
        return quiz.without_answers(document.content)
    return document.content


def document_out(document: GeneratedDocument, user_id: int) -> dict:
    return {
        "id": document.pk,
        "kind": document.kind,
        "status": document.status,
        "stage": document.stage,
        "progress_done": document.progress_done,
        "progress_total": document.progress_total,
        "error": document.error,
        "title": document.title,
        "mode": document.mode,
        "language": document.language,
        "created_at": document.created_at,
        "mine": document.owner_id == user_id,
    }
