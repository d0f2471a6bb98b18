"""The notebook page's "Remembered" panel: the person's facts that apply there, each
editable, and a form to add one (the chat's /remember does the same)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from memory import services
from memory.forms import FactForm
from memory.models import MAX_FACT_CHARS, MAX_FACTS
from memory.services import MemoryRefused
from notebooks.models import Notebook
from sharing.models import Role
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user


def panel_context(request: HtmxHttpRequest, notebook: Notebook, **extra: object) -> dict:
    return {
        "notebook": notebook,
        "memories": list(services.facts_for(user=request.user, notebook=notebook)),
        "max_chars": MAX_FACT_CHARS,
        "max_facts": MAX_FACTS,
        **extra,
    }


def _after(request: HtmxHttpRequest, notebook: Notebook, error: str = "") -> HttpResponse:
    if request.htmx:
        context = panel_context(request, notebook, error=error, open=True)
        return render(request, "memory/_memories.html", context)
    if error:
        messages.error(request, error)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_GET
def panel(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    return render(request, "memory/_memories.html", panel_context(request, notebook, open=True))


@login_required
@require_POST
def add(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = FactForm(request.POST)
    form.is_valid()  # two optional fields: always valid
    try:
        services.remember(
            user=request.user,
            notebook=None if form.cleaned_data["everywhere"] else notebook,
            text=form.cleaned_data["text"],
        )
    except MemoryRefused as exc:
        return _after(request, notebook, str(exc))
    return _after(request, notebook)


@login_required
@require_POST
def change(request: HtmxHttpRequest, notebook_id: int, memory_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    fact = get_object_or_404(services.facts_for(user=request.user, notebook=notebook), pk=memory_id)
    form = FactForm(request.POST)
    form.is_valid()
    try:
        services.change_memory(
            memory=fact,
            text=form.cleaned_data["text"],
            everywhere=form.cleaned_data["everywhere"],
            notebook=notebook,
        )
    except MemoryRefused as exc:
        return _after(request, notebook, str(exc))
    return _after(request, notebook)


@login_required
@require_POST
def forget(request: HtmxHttpRequest, notebook_id: int, memory_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    facts = services.facts_for(user=request.user, notebook=notebook)
    get_object_or_404(facts, pk=memory_id).delete()
    return _after(request, notebook)
