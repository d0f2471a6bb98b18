"""A person's conversations in a notebook: finding one, renaming, deleting, posting it."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from notebooks.forms import PostForm, TitleForm
from notebooks.models import Conversation, Notebook
from sharing import access
from web.forms import bad_request
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user


def get_conversation(
    request: HtmxHttpRequest, notebook: Notebook, conversation_id: int | str, *, own: bool = False
) -> Conversation:
    """One of the notebook's conversations the user may read (the notebook already
    checked), or with `own` one they may ask in and change: their own; 404 otherwise."""
    if not str(conversation_id).isdigit():
        raise Http404("No such conversation.")
    if own:
        return get_object_or_404(
            access.own_conversations(request.user, notebook), pk=conversation_id
        )
    return get_object_or_404(
        access.visible_conversations(request.user, notebook), pk=conversation_id
    )


def conversations_context(
    request: HtmxHttpRequest, notebook: Notebook, conversation: Conversation | None
) -> dict[str, Any]:
    conversations = list(
        access.visible_conversations(request.user, notebook)
        .select_related("user")
        .with_first_question()
    )
    # Two conversations that began with the same question are told apart by when.
    titles = Counter(item.display_title for item in conversations)
    return {
        "conversation": conversation,
        "conversations": conversations,
        "same_titles": {item.pk for item in conversations if titles[item.display_title] > 1},
    }


@login_required
@require_POST
def rename_conversation(
    request: HtmxHttpRequest, notebook_id: int, conversation_id: int
) -> HttpResponse:
    """Give a conversation a title; an empty one names it by its first question again."""
    notebook = get_notebook_for_user(request, notebook_id)
    conversation = get_conversation(request, notebook, conversation_id, own=True)
    form = TitleForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    conversation.rename(form.cleaned_data["title"])
    return redirect("notebooks:conversation", notebook.pk, conversation.pk)


@login_required
@require_POST
def delete_conversation(
    request: HtmxHttpRequest, notebook_id: int, conversation_id: int
) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id)
    get_conversation(request, notebook, conversation_id, own=True).delete()
    url = reverse("notebooks:detail", args=[notebook.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@login_required
@require_POST
def post_conversation(
    request: HtmxHttpRequest, notebook_id: int, conversation_id: int
) -> HttpResponse:
    """Post one's conversation to the notebook (everyone it is shared with may read it), or
    make it private again."""
    notebook = get_notebook_for_user(request, notebook_id)
    conversation = get_conversation(request, notebook, conversation_id, own=True)
    form = PostForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    conversation.post(form.cleaned_data["posted"] == "1")
    return redirect("notebooks:conversation", notebook.pk, conversation.pk)
