"""The share dialog of a notebook (its owner's), leaving a shared notebook, and the public
library with publishing. Every rule is sharing/access.py's."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from notebooks.models import Notebook
from sharing import access, services
from sharing.forms import PublicSearchForm, ShareForm
from sharing.models import Membership, Role
from web.forms import bad_request
from web.notebook_pages import HtmxHttpRequest


def _share_context(notebook: Notebook, **extra: Any) -> dict[str, Any]:
    return {
        "notebook": notebook,
        "members": list(notebook.memberships.select_related("user")),
        "history": services.notebook_history(notebook),
        "roles": [(Role.EDITOR, Role.EDITOR.label), (Role.VIEWER, Role.VIEWER.label)],
        **extra,
    }


def _render_share(request: HtmxHttpRequest, notebook: Notebook, **extra: Any) -> HttpResponse:
    template = "sharing/notebook.html#dialog" if request.htmx else "sharing/notebook.html"
    return render(request, template, _share_context(notebook, **extra))


@login_required
@require_GET
def notebook(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """Who the notebook is shared with, the form to share it, and its sharing history."""
    shared = access.get_notebook(request.user, notebook_id, Role.OWNER)
    return _render_share(request, shared)


@login_required
@require_POST
def share(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    shared = access.get_notebook(request.user, notebook_id, Role.OWNER)
    form = ShareForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    who = form.cleaned_data["person"]
    try:
        person = services.find_person(who)
        membership = services.share(
            notebook=shared, actor=request.user, person=person, role=form.cleaned_data["role"]
        )
    except services.SharingError as exc:
        return _render_share(request, shared, error=str(exc), person=who)
    note = _("%(person)s can now %(what)s “%(notebook)s”.") % {
        "person": person.get_username(),
        "what": _("edit") if membership.role == Role.EDITOR else _("view"),
        "notebook": shared.title,
    }
    if request.htmx:
        return _render_share(request, shared, note=note)
    messages.success(request, note)
    return redirect("sharing:notebook", shared.pk)


@login_required
@require_POST
def revoke(request: HtmxHttpRequest, notebook_id: int, membership_id: int) -> HttpResponse:
    shared = access.get_notebook(request.user, notebook_id, Role.OWNER)
    membership = get_object_or_404(Membership, pk=membership_id, notebook=shared)
    services.revoke(notebook=shared, actor=request.user, person=membership.user)
    note = _("%(person)s no longer has access to “%(notebook)s”.") % {
        "person": membership.user.get_username(),
        "notebook": shared.title,
    }
    if request.htmx:
        return _render_share(request, shared, note=note)
    messages.success(request, note)
    return redirect("sharing:notebook", shared.pk)


@login_required
@require_POST
def leave(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """A member takes themself out of a notebook shared with them."""
    shared = access.get_notebook(request.user, notebook_id)
    if shared.role == Role.OWNER:
        raise PermissionDenied(_("You own this notebook: there is nothing to leave."))
    services.revoke(notebook=shared, actor=request.user, person=request.user)
    messages.success(request, _("You left “%(notebook)s”.") % {"notebook": shared.title})
    return redirect("notebooks:list")


# The public library ---------------------------------------------------------------------


@login_required
@require_GET
def public_library(request: HtmxHttpRequest) -> HttpResponse:
    """Every public source, searchable by title, summary and text; each can be added to a
    notebook the reader edits (linked, not copied)."""
    search = PublicSearchForm(request.GET)
    if not search.is_valid():
        return bad_request(search)
    query = search.cleaned_data["q"]
    sources = services.public_library(query=query)
    context = {
        "sources": list(sources[:200]),
        "query": query,
        "notebooks": list(access.editable_notebooks(request.user).order_by("title")),
        "may_publish": access.may_publish(request.user),
    }
    template = "sharing/public_library.html"
    if request.htmx and request.htmx.target == "public-sources":
        template += "#results"
    return render(request, template, context)


@login_required
@require_POST
def publish(request: HtmxHttpRequest, source_id: int) -> HttpResponse:
    source = get_object_or_404(access.readable_sources(request.user), pk=source_id)
    try:
        services.publish(source=source, actor=request.user)
    except services.SharingError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            _("“%(title)s” is in the public library: everyone signed in can read it.")
            % {"title": source.title},
        )
    return redirect("library:library")


@login_required
@require_POST
def unpublish(request: HtmxHttpRequest, source_id: int) -> HttpResponse:
    source = get_object_or_404(access.readable_sources(request.user), pk=source_id)
    services.unpublish(source=source, actor=request.user)
    messages.success(
        request,
        _("“%(title)s” left the public library; notebooks that took it from there lost it.")
        % {"title": source.title},
    )
    return redirect("library:library")
