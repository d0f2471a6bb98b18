"""Notebooks: the caller's own and those shared with them."""

from __future__ import annotations

from typing import Literal

from ninja import Field, Router, Schema, Status

from api.auth import WRITE, ApiRequest
from api.errors import COMMON, ApiError, ErrorOut
from api.v1.common import get_notebook
from api.v1.schemas import NO_NUL, NotebookIn, NotebookOut, notebook_out
from generation import chat_style
from notebooks.models import Notebook
from notebooks.services import NotebookTitleTaken, create_notebook
from sharing import access
from sharing.models import Membership, Role
from texts.errors import UserFacingError

router = Router(tags=["notebooks"])


@router.get("/notebooks", response={200: list[NotebookOut], **COMMON}, summary="Your notebooks")
def list_notebooks(request: ApiRequest) -> list[dict]:
    roles = dict(Membership.objects.filter(user=request.user).values_list("notebook_id", "role"))
    notebooks = access.readable_notebooks(request.user).select_related("owner").order_by("pk")
    return [
        notebook_out(
            notebook, "owner" if notebook.owner_id == request.user.pk else roles[notebook.pk]
        )
        for notebook in notebooks
    ]


@router.post(
    "/notebooks",
    response={201: NotebookOut, 409: ErrorOut, **COMMON},
    auth=WRITE,
    summary="Create a notebook",
)
def add_notebook(request: ApiRequest, payload: NotebookIn) -> Status:
    try:
        notebook = create_notebook(owner=request.user, title=payload.title)
    except NotebookTitleTaken as exc:
        raise ApiError(409, "title_taken", str(exc), "body.title") from exc
    except UserFacingError as exc:
        raise ApiError(400, "invalid_title", str(exc), "body.title") from exc
    return Status(201, notebook_out(notebook, "owner"))


@router.get("/notebooks/{notebook_id}", response={200: NotebookOut, **COMMON}, summary="A notebook")
def read_notebook(request: ApiRequest, notebook_id: int) -> dict:
    notebook = get_notebook(request, notebook_id)
    return notebook_out(notebook, str(notebook.role))


class ChatStyle(Schema):
    goal: Literal["default", "learning", "custom"] = Field(
        description="learning: explain, then ask back; custom: follow `instructions`"
    )
    length: Literal["shorter", "default", "longer"]
    instructions: str = Field("", max_length=chat_style.MAX_INSTRUCTIONS, pattern=NO_NUL)


def _style_out(notebook: Notebook) -> dict:
    return {
        "goal": notebook.chat_goal,
        "length": notebook.chat_length,
        "instructions": notebook.chat_instructions,
    }


@router.get(
    "/notebooks/{notebook_id}/chat-style",
    response={200: ChatStyle, **COMMON},
    summary="How the notebook's chat answers, for everyone who asks there",
)
def read_chat_style(request: ApiRequest, notebook_id: int) -> dict:
    return _style_out(get_notebook(request, notebook_id))


@router.put(
    "/notebooks/{notebook_id}/chat-style",
    response={200: ChatStyle, **COMMON},
    auth=WRITE,
    summary="Change how the notebook's chat answers (its owner and editors)",
)
def change_chat_style(request: ApiRequest, notebook_id: int, payload: ChatStyle) -> dict:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    try:
        chat_style.set_chat_style(
            notebook=notebook,
            goal=payload.goal,
            length=payload.length,
            instructions=payload.instructions,
        )
    except UserFacingError as exc:
        raise ApiError(422, "invalid_input", str(exc), "body.instructions") from exc
    return _style_out(notebook)
