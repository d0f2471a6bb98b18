"""A person's library (every source they added, in any notebook) and their preferences;
everyone sees and changes only their own. Which notebooks and sources: sharing/access.py."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from library.forms import AddToNotebookForm, PreferencesForm
from library.models import Preferences, Source
from notebooks.models import Notebook
from notebooks.services import delete_from_library
from sharing import access
from sharing.services import link_source
from texts.errors import UserFacingError
from web.forms import bad_request


class AuthenticatedHttpRequest(HttpRequest):
    htmx: HtmxDetails
    user: User  # every view here is @login_required


@dataclass(frozen=True)
class LibraryRow:
    source: Source
    used_in: list[Notebook]  # the person's notebooks (own or shared) that hold it
    addable: list[Notebook]  # the notebooks they edit that do not yet
    publishable: bool = False
    unpublishable: bool = False


def _library_rows(user: User, *, only: int | None = None) -> list[LibraryRow]:
    """Each source with the notebooks that use it and the ones it could be added to."""
    notebooks = list(access.editable_notebooks(user).order_by("title"))
    readable = access.readable_notebooks(user).order_by("title")
    sources = Source.objects.filter(owner=user).prefetch_related(
        Prefetch("notebooks", queryset=readable)
    )
    if only is not None:
        sources = sources.filter(pk=only)
    publishable = set(access.publishable_sources(user).values_list("pk", flat=True))
    unpublishable = set(access.unpublishable_sources(user).values_list("pk", flat=True))
    rows = []
    for source in sources:
        used_in = list(source.notebooks.all())
        addable = [notebook for notebook in notebooks if notebook not in used_in]
        rows.append(
            LibraryRow(
                source=source,
                used_in=used_in,
                addable=addable,
                publishable=source.pk in publishable,
                unpublishable=source.pk in unpublishable,
            )
        )
    return rows


@login_required
@require_GET
def library(request: AuthenticatedHttpRequest) -> HttpResponse:
    rows = _library_rows(request.user)
    context = {
        "rows": rows,
        "has_notebooks": access.readable_notebooks(request.user).exists(),
        # The page polls itself while a source is still being read.
        "polling": any(not row.source.is_finished for row in rows),
    }
    if request.htmx and request.htmx.target == "library-sources":
        return render(request, "library/library.html#sources", context)
    return render(request, "library/library.html", context)


@login_required
@require_POST
def add_to_notebook(request: AuthenticatedHttpRequest, source_id: int) -> HttpResponse:
    """Put one of my sources, or a public one, into a notebook I edit; any other source
    or notebook is a 404."""
    source = get_object_or_404(access.linkable_sources(request.user), pk=source_id)
    form = AddToNotebookForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    notebook_id = form.cleaned_data["notebook"]
    error = ""
    if notebook_id is None:
        error = _("Choose a notebook to add “%(title)s” to.") % {"title": source.title}
    else:
        notebook = get_object_or_404(access.editable_notebooks(request.user), pk=notebook_id)
        if link_source(notebook=notebook, source=source, user=request.user):
            note = _("“%(source)s” is now in “%(notebook)s”.")
        else:
            note = _("“%(source)s” was already in “%(notebook)s”.")
        note = note % {"source": source.title, "notebook": notebook.title}
    if request.htmx and source.owner_id == request.user.pk:
        context = {"row": _library_rows(request.user, only=source.pk)[0], "error": error}
        if not error:
            context["note"] = note
        return render(request, "library/library.html#row", context)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, note)
    # Back where the person was (the public library), if that is a page of this site.
    back = form.cleaned_data["next"]
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        return redirect(back)
    return redirect("library:library")


@login_required
@require_POST
def delete_source(request: AuthenticatedHttpRequest, source_id: int) -> HttpResponse:
    """Delete one of my sources that no notebook holds (notebooks.services)."""
    source = get_object_or_404(Source, pk=source_id, owner=request.user)
    try:
        delete_from_library(owner=request.user, source=source)
    except UserFacingError as exc:
        if request.htmx:
            row = _library_rows(request.user, only=source.pk)[0]
            return render(request, "library/library.html#row", {"row": row, "error": str(exc)})
        messages.error(request, str(exc))
        return redirect("library:library")
    if request.htmx:
        return HttpResponse("")  # the row goes
    messages.success(request, _("“%(title)s” was deleted.") % {"title": source.title})
    return redirect("library:library")


@login_required
@require_http_methods(["GET", "POST"])
def preferences(request: AuthenticatedHttpRequest) -> HttpResponse:
    data = request.POST if request.method == "POST" else None
    form = PreferencesForm(data, instance=Preferences.of(request.user))
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Your preferences are saved."))
        return redirect("library:preferences")
    return render(request, "library/preferences.html", {"form": form})
