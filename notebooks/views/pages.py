"""The notebook list, a new notebook, the notebook page itself and its chat style."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, OuterRef, Subquery
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from generation import chat_style
from notebooks.forms import AboutForm, ChatStyleForm, TitleForm
from notebooks.models import Message, Notebook
from notebooks.services import create_notebook
from notebooks.views.chat import get_source_to_ask_about
from notebooks.views.conversations import conversations_context, get_conversation
from notebooks.views.notes import notes_context
from notebooks.views.sources import capture_context, sources_context
from sharing import access
from sharing.models import Membership, Role
from texts.errors import UserFacingError
from web.forms import bad_request
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user


def _render_list(request: HtmxHttpRequest, *, error: str = "", title: str = "") -> HttpResponse:
    # The notebook's live links, as access.notebook_links counts them.
    live = Count("notebooksource", filter=access.live_link("notebooksource"))
    notebooks = Notebook.objects.filter(owner=request.user).annotate(source_count=live)
    shared = (
        access.shared_with(request.user)
        .select_related("owner")
        .annotate(
            source_count=live,
            my_role=Subquery(
                Membership.objects.filter(notebook=OuterRef("pk"), user=request.user).values(
                    "role"
                )[:1]
            ),
        )
    )
    return render(
        request,
        "notebooks/list.html",
        {"notebooks": notebooks, "shared": shared, "error": error, "title": title},
    )


@login_required
@require_GET
def notebook_list(request: HtmxHttpRequest) -> HttpResponse:
    return _render_list(request)


@login_required
@require_POST
def create(request: HtmxHttpRequest) -> HttpResponse:
    form = TitleForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    title = form.cleaned_data["title"]
    try:
        notebook = create_notebook(owner=request.user, title=title)
    except UserFacingError as exc:
        return _render_list(request, error=str(exc), title=title)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_GET
def detail(
    request: HtmxHttpRequest,
    notebook_id: int,
    conversation_id: int | None = None,
    new: bool = False,
) -> HttpResponse:
    """The notebook page with one conversation open: the latest by default, the one in the
    URL, or none yet (`new`: the first question starts it)."""
    notebook = get_notebook_for_user(request, notebook_id)
    query = AboutForm(request.GET)
    if not query.is_valid():
        return bad_request(query)
    if new:
        conversation = None
    elif conversation_id is not None:
        conversation = get_conversation(request, notebook, conversation_id)
    else:
        conversation = access.visible_conversations(request.user, notebook).first()
    chat: list[Message] = []
    if conversation is not None:
        chat = list(conversation.messages.prefetch_related("citations", "citations__chunk"))
    context = sources_context(request, notebook)
    context.update(conversations_context(request, notebook, conversation))
    context.update(
        {"chat": chat, "about": get_source_to_ask_about(notebook, query.cleaned_data["about"])}
    )
    if notebook.role == Role.OWNER:
        context["members"] = list(notebook.memberships.select_related("user"))
    context.update(capture_context(request.user))
    context.update(notes_context(request, notebook))
    context.update(_style_context(notebook))
    return render(request, "notebooks/detail.html", context)


def _style_context(notebook: Notebook) -> dict[str, Any]:
    return {
        "goal_choices": Notebook.ChatGoal.choices,
        "length_choices": Notebook.ChatLength.choices,
        "max_instructions": chat_style.MAX_INSTRUCTIONS,
    }


@login_required
@require_POST
def chat_style_view(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """How the chat answers in this notebook, for everyone who asks: owner and editors."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = ChatStyleForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    try:
        chat_style.set_chat_style(
            notebook=notebook,
            goal=form.cleaned_data["goal"],
            length=form.cleaned_data["length"],
            instructions=form.cleaned_data["instructions"],
        )
    except UserFacingError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, _("The chat style was saved."))
    # Back to the page it was saved from (the conversation that was open), never elsewhere.
    back = form.cleaned_data["next"]
    notebook_url = reverse("notebooks:detail", args=[notebook.pk])
    if back.startswith(notebook_url) and url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}
    ):
        return redirect(back)
    return redirect(notebook_url)
