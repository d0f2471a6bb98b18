"""The MCP server: Loupe's notebooks as tools for agents, over streamable HTTP at /mcp
(config/asgi.py) and over stdio (`manage.py mcp`). Every call acts as the user of the
personal access token it carries (the Authorization header; for stdio, the token the
command was given), under the same access rules, billing and limits as the API."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile
from django.db import close_old_connections
from django.http import Http404
from django.shortcuts import get_object_or_404
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from api import answers
from api.auth import ApiRequest, token_user
from api.errors import ApiError
from api.v1.common import billed
from api.v1.schemas import citation_out, document_content, document_out, source_out
from billing.services import CreditSpent, credit_spent_message, usage_for
from generation.citations import unsupported_sentences
from generation.documents.models import GeneratedDocument
from generation.documents.services import request_document
from ingest.services import UploadRejected, add_url
from ingest.services import add_source as add_file
from library.models import Preferences
from memory import services as memory_services
from notebooks.models import Notebook
from providers.errors import ProviderError
from retrieval.chosen_sources import source_choice
from retrieval.services import retrieve
from sharing import access
from sharing.models import Role
from texts import message_of, translated
from texts.errors import UserFacingError

server = MCPServer(
    name="Loupe",
    instructions=(
        "Loupe answers questions from a person's notebooks of documents, every claim cited "
        "with [n] to a passage (source, page, quote). List the notebooks, search or ask one, "
        "add sources and make studio documents (reports, quizzes, tables, mind maps ...)."
    ),
)

# The token `manage.py mcp` was started with: stdio carries no headers.
stdio_token: str | None = None

T = TypeVar("T")


def _secret(ctx: Context) -> str:
    headers = ctx.headers
    if headers is None:
        if stdio_token:
            return stdio_token
        raise ToolError("not_authenticated: start `manage.py mcp` with --token.")
    scheme, _, secret = (headers.get("authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not secret:
        raise ToolError("not_authenticated: send Authorization: Bearer <token>.")
    return secret.strip()


async def _as_user(ctx: Context, work: Callable[[ApiRequest], T], *, write: bool = False) -> T:
    """`work(request)` in a thread (it uses the ORM), as the token's user; refusals become
    tool errors that start with the API's stable code."""
    secret = _secret(ctx)

    def run() -> T:
        request = ApiRequest()
        try:
            token_user(request, secret, write=write)
            return work(request)
        except ApiError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from exc
        except Http404 as exc:
            raise ToolError("not_found: no such notebook, source or document.") from exc
        except CreditSpent as exc:
            raise ToolError(f"credit_spent: {credit_spent_message()}") from exc
        except ProviderError as exc:
            raise ToolError(f"model_failed: {translated(message_of(exc))}") from exc
        except UserFacingError as exc:
            raise ToolError(f"refused: {translated(message_of(exc))}") from exc
        except PermissionDenied as exc:
            raise ToolError(f"forbidden: {exc}") from exc
        finally:
            # No request_finished here: this thread's connection is let go as a request's is.
            close_old_connections()

    return await sync_to_async(run, thread_sensitive=False)()


def _notebook(request: ApiRequest, notebook_id: int, need: Role = Role.VIEWER) -> Notebook:
    return access.get_notebook(request.user, notebook_id, need)


@server.tool()
async def list_notebooks(ctx: Context) -> list[dict[str, Any]]:
    """The notebooks you may read: id, title, your role (owner, editor, viewer)."""

    def work(request: ApiRequest) -> list[dict[str, Any]]:
        user = request.user
        return [
            {
                "id": notebook.pk,
                "title": notebook.title,
                "role": "owner" if notebook.owner_id == user.pk else "member",
            }
            for notebook in access.readable_notebooks(user).order_by("pk")
        ]

    return await _as_user(ctx, work)


@server.tool()
async def search_notebook(
    notebook_id: int, query: str, ctx: Context, limit: int = 8
) -> list[dict[str, Any]]:
    """The passages of a notebook closest to `query`, best first, each with its citation:
    source, page, printed page label, section and similarity."""

    def work(request: ApiRequest) -> list[dict[str, Any]]:
        notebook = _notebook(request, notebook_id)
        if not query.strip():
            raise ApiError(422, "invalid_input", "The query is empty.", "query")
        billed(request, "ask")
        with usage_for(notebook_id=notebook.pk):
            hits = retrieve(
                user=request.user, notebook=notebook, question=query, k=max(1, min(limit, 20))
            )
        return [answers.passage_out(n, hit) for n, hit in enumerate(hits, 1)]

    return await _as_user(ctx, work)


@server.tool()
async def ask(
    notebook_id: int, question: str, ctx: Context, conversation_id: int | None = None
) -> dict[str, Any]:
    """Ask a notebook; the answer with its [n] markers and the citations they name (source,
    page, quote, whether the passage supports the claim), and the answer's sentences that no
    passage supports (`unsupported`). Billed as any question."""

    def work(request: ApiRequest) -> dict[str, Any]:
        notebook = _notebook(request, notebook_id, Role.EDITOR)
        conversation, _source = answers.conversation_and_source(
            request.user, notebook, conversation_id, None
        )
        billed(request, "ask")
        answer = answers.ask(
            user=request.user, notebook=notebook, question=question, conversation=conversation
        )
        return {
            "conversation_id": answer.conversation.pk,
            "answer": answer.message.content,
            "mode": answer.message.mode,
            "citations": [citation_out(cited) for cited in answer.message.citations.all()],
            # The answer's sentences that no passage supports: the model's words, not the
            # sources' (the page marks them [?]).
            "unsupported": unsupported_sentences(answer.message),
        }

    return await _as_user(ctx, work, write=True)


@server.tool()
async def remember(notebook_id: int, fact: str, ctx: Context) -> dict[str, Any]:
    """Remember a fact about you or how to answer, for one notebook: given to the model
    with your questions there as your own words, never as a source. Your remembered facts
    there afterwards, numbered."""

    def work(request: ApiRequest) -> dict[str, Any]:
        notebook = _notebook(request, notebook_id, Role.EDITOR)
        memory_services.remember(user=request.user, notebook=notebook, text=fact)
        return _memories(request, notebook)

    return await _as_user(ctx, work, write=True)


@server.tool()
async def list_memories(notebook_id: int, ctx: Context) -> dict[str, Any]:
    """Your remembered facts that apply in a notebook, numbered as /memory lists them."""

    def work(request: ApiRequest) -> dict[str, Any]:
        return _memories(request, _notebook(request, notebook_id, Role.EDITOR))

    return await _as_user(ctx, work)


@server.tool()
async def forget(notebook_id: int, which: str, ctx: Context) -> dict[str, Any]:
    """Forget one remembered fact: its number in list_memories, or words only it holds."""

    def work(request: ApiRequest) -> dict[str, Any]:
        notebook = _notebook(request, notebook_id, Role.EDITOR)
        memory_services.find_fact(user=request.user, notebook=notebook, which=which).delete()
        return _memories(request, notebook)

    return await _as_user(ctx, work, write=True)


def _memories(request: ApiRequest, notebook: Notebook) -> dict[str, Any]:
    facts = memory_services.facts_for(user=request.user, notebook=notebook)
    return {
        "memories": [
            {"number": number, "text": fact.text, "everywhere": fact.notebook_id is None}
            for number, fact in enumerate(facts, start=1)
        ]
    }


@server.tool()
async def add_source(
    notebook_id: int,
    ctx: Context,
    url: str = "",
    text: str = "",
    filename: str = "note.md",
) -> dict[str, Any]:
    """Add a source to a notebook: a web page (`url`), or a text or Markdown document
    (`text`, named `filename`). It is read in the background: follow it with source_status."""

    def work(request: ApiRequest) -> dict[str, Any]:
        notebook = _notebook(request, notebook_id, Role.EDITOR)
        if bool(url) == bool(text):
            raise ApiError(422, "invalid_input", "Give either a url or a text.", "url")
        billed(request, "upload")
        capture = Preferences.of(request.user).pdf_capture
        try:
            if url:
                added = add_url(owner=request.user, notebook=notebook, url=url, pdf_capture=capture)
            else:
                upload = ContentFile(text.encode(), name=filename or "note.md")
                added = add_file(owner=request.user, notebook=notebook, upload=upload)
        except UploadRejected as exc:
            raise ApiError(400, "upload_rejected", str(exc), "url" if url else "text") from exc
        return {"created": added.created, "source": _plain(source_out(added.source))}

    return await _as_user(ctx, work, write=True)


@server.tool()
async def source_status(notebook_id: int, source_id: int, ctx: Context) -> dict[str, Any]:
    """A source's status (queued, processing, ready, failed), stage, progress and error."""

    def work(request: ApiRequest) -> dict[str, Any]:
        notebook = _notebook(request, notebook_id)
        source = get_object_or_404(access.notebook_sources(notebook), pk=source_id)
        return _plain(source_out(source))

    return await _as_user(ctx, work)


@server.tool()
async def make_studio_document(
    notebook_id: int, kind: str, ctx: Context, language: str = ""
) -> dict[str, Any]:
    """Queue a studio document made from the notebook's chosen sources: report, quiz, table,
    mindmap, infographic, audio, flashcards, slides or video. Follow it with document_status."""

    def work(request: ApiRequest) -> dict[str, Any]:
        notebook = _notebook(request, notebook_id, Role.EDITOR)
        billed(request, "generate")
        document = request_document(
            user=request.user,
            notebook=notebook,
            kind=kind,
            language=language,
            chosen_sources=source_choice(user=request.user, notebook=notebook).searched,
        )
        return _plain(document_out(document, request.user.pk))

    return await _as_user(ctx, work, write=True)


@server.tool()
async def document_status(notebook_id: int, document_id: int, ctx: Context) -> dict[str, Any]:
    """A studio document's status; once ready, its content (with [n]) and citations. A
    quiz comes without its answers (each question is checked by the API's quiz route)."""

    def work(request: ApiRequest) -> dict[str, Any]:
        notebook = _notebook(request, notebook_id)
        document = get_object_or_404(GeneratedDocument, pk=document_id, notebook=notebook)
        return _plain(
            {
                **document_out(document, request.user.pk),
                "content": document_content(document),
                "citations": [citation_out(cited) for cited in document.citations.all()],
            }
        )

    return await _as_user(ctx, work)


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    """Dates and decimals as JSON has them."""
    return json.loads(json.dumps(data, default=str))
