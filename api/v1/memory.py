"""The caller's remembered facts in a notebook (the chat's /remember, memory/): their own,
given to the model with their questions there, never cited."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status

from api.auth import WRITE, ApiRequest
from api.errors import COMMON, ApiError
from api.v1.common import get_notebook
from api.v1.schemas import WORDS
from memory import services
from memory.models import MAX_FACT_CHARS, Memory
from memory.services import MemoryRefused
from sharing.models import Role

router = Router(tags=["memory"])


class MemoryIn(Schema):
    text: str = Field(
        ...,
        description=f"the fact, at most {MAX_FACT_CHARS} characters",
        max_length=MAX_FACT_CHARS,
        pattern=WORDS,
    )
    everywhere: bool = Field(False, description="true: for all your notebooks, not this one")


class MemoryPatch(Schema):
    text: str | None = Field(None, max_length=MAX_FACT_CHARS, pattern=WORDS)
    everywhere: bool | None = None


class MemoryOut(Schema):
    id: int
    number: int = Field(description="its number in /memory's list here (/forget N)")
    text: str
    everywhere: bool


def _facts(request: ApiRequest, notebook_id: int):
    # Facts are kept where one may ask: an owner's or an editor's notebook.
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    return notebook, services.facts_for(user=request.user, notebook=notebook)


def _out(fact: Memory, number: int) -> dict:
    return {
        "id": fact.pk,
        "number": number,
        "text": fact.text,
        "everywhere": fact.notebook_id is None,
    }


def _numbered(request: ApiRequest, notebook_id: int, fact: Memory) -> dict:
    _notebook, facts = _facts(request, notebook_id)
    ids = list(facts.values_list("pk", flat=True))
    return _out(fact, ids.index(fact.pk) + 1)


def _refused(exc: MemoryRefused) -> ApiError:
    return ApiError(422, "memory_refused", str(exc), "body.text")


@router.get(
    "/notebooks/{notebook_id}/memories",
    response={200: list[MemoryOut], **COMMON},
    summary="Your remembered facts that apply in the notebook, numbered as /memory lists them",
)
def list_memories(request: ApiRequest, notebook_id: int) -> list[dict]:
    _notebook, facts = _facts(request, notebook_id)
    return [_out(fact, number) for number, fact in enumerate(facts, start=1)]


@router.post(
    "/notebooks/{notebook_id}/memories",
    response={200: MemoryOut, 201: MemoryOut, **COMMON},
    auth=WRITE,
    summary="Remember a fact (201; 200 when the same words were remembered there already)",
)
def add_memory(request: ApiRequest, notebook_id: int, payload: MemoryIn) -> Status:
    notebook, _facts_here = _facts(request, notebook_id)
    try:
        fact, new = services.remember(
            user=request.user,
            notebook=None if payload.everywhere else notebook,
            text=payload.text,
        )
    except MemoryRefused as exc:
        raise _refused(exc) from exc
    return Status(201 if new else 200, _numbered(request, notebook_id, fact))


@router.patch(
    "/notebooks/{notebook_id}/memories/{memory_id}",
    response={200: MemoryOut, **COMMON},
    auth=WRITE,
    summary="Change a fact's words, or where it applies",
)
def change_memory(
    request: ApiRequest, notebook_id: int, memory_id: int, payload: MemoryPatch
) -> dict:
    notebook, facts = _facts(request, notebook_id)
    fact = get_object_or_404(facts, pk=memory_id)
    try:
        services.change_memory(
            memory=fact,
            text=fact.text if payload.text is None else payload.text,
            everywhere=(fact.notebook_id is None)
            if payload.everywhere is None
            else payload.everywhere,
            notebook=notebook,
        )
    except MemoryRefused as exc:
        raise _refused(exc) from exc
    return _numbered(request, notebook_id, fact)


@router.delete(
    "/notebooks/{notebook_id}/memories/{memory_id}",
    response={204: None, **COMMON},
    auth=WRITE,
    summary="Forget a fact",
)
def forget_memory(request: ApiRequest, notebook_id: int, memory_id: int) -> Status:
    _notebook, facts = _facts(request, notebook_id)
    get_object_or_404(facts, pk=memory_id).delete()
    return Status(204, None)
