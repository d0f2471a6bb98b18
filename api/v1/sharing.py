"""Sharing a notebook: its owner lists, adds and removes the people it is shared with; a
member may leave (sharing/services.py, as on the sharing page)."""

from __future__ import annotations

from typing import Literal

from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status

from api.auth import WRITE, ApiRequest
from api.errors import COMMON, ApiError
from api.v1.common import get_notebook
from api.v1.schemas import NO_NUL
from sharing.models import Membership, Role
from sharing.services import SharingError, find_person, revoke, share

router = Router(tags=["sharing"])


class MemberIn(Schema):
    person: str = Field(
        ..., min_length=1, max_length=254, description="a user name or e-mail", pattern=NO_NUL
    )
    role: Literal["editor", "viewer"]


class MemberOut(Schema):
    id: int
    username: str
    role: Literal["editor", "viewer"]


def _member_out(membership: Membership) -> dict:
    return {
        "id": membership.pk,
        "username": membership.user.get_username(),
        "role": membership.role,
    }


@router.get(
    "/notebooks/{notebook_id}/members",
    response={200: list[MemberOut], **COMMON},
    summary="The people the notebook is shared with (its owner only)",
)
def members(request: ApiRequest, notebook_id: int) -> list[dict]:
    notebook = get_notebook(request, notebook_id, Role.OWNER)
    return [_member_out(m) for m in notebook.memberships.select_related("user").order_by("pk")]


@router.put(
    "/notebooks/{notebook_id}/members",
    response={200: MemberOut, **COMMON},
    auth=WRITE,
    summary="Share the notebook with someone, or change their role (its owner only)",
)
def add_member(request: ApiRequest, notebook_id: int, payload: MemberIn) -> dict:
    notebook = get_notebook(request, notebook_id, Role.OWNER)
    try:
        person = find_person(payload.person)
    except SharingError as exc:
        raise ApiError(404, "not_found", str(exc), "body.person") from exc
    try:
        membership = share(notebook=notebook, actor=request.user, person=person, role=payload.role)
    except SharingError as exc:
        raise ApiError(422, "invalid_input", str(exc), "body.person") from exc
    return _member_out(membership)


@router.delete(
    "/notebooks/{notebook_id}/members/{membership_id}",
    response={204: None, **COMMON},
    auth=WRITE,
    summary="Stop sharing with someone (the owner), or leave the notebook (the member)",
)
def remove_member(request: ApiRequest, notebook_id: int, membership_id: int) -> Status:
    notebook = get_notebook(request, notebook_id)
    membership = get_object_or_404(
        Membership.objects.select_related("user"), pk=membership_id, notebook=notebook
    )
    # The owner removes anyone, a member only themself: sharing.services.revoke says so.
    revoke(notebook=notebook, actor=request.user, person=membership.user)
    return Status(204, None)
