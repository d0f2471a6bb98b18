"""Direct uploads to S3 (ingest/direct_uploads.py), as JSON for the page's script: reserve
a file and get its signed URL, then confirm it once the browser has put it there."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_POST

from billing.decorators import credit_required
from ingest import direct_uploads
from ingest.forms import ReserveForm
from ingest.models import UploadReservation
from ingest.services import UploadRejected
from library.models import Preferences
from limits.decorators import rate_limited
from sharing.models import Role
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user


@login_required
@require_POST
@credit_required
@rate_limited("upload")
def reserve(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    if not direct_uploads.available():
        raise Http404("Direct uploads need S3 storage.")
    form = ReserveForm(request.POST)
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))
        return JsonResponse({"error": f"{field}: {errors[0]}"}, status=400)
    try:
        reserved = direct_uploads.reserve_upload(
            owner=request.user,
            notebook=notebook,
            filename=form.cleaned_data["filename"],
            size=form.cleaned_data["size"],
            content_type=form.cleaned_data["content_type"],
            sha256=form.cleaned_data["sha256"],
            pdf_capture=form.cleaned_data["pdf_capture"]
            or Preferences.of(request.user).pdf_capture,
        )
    except UploadRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(
        {
            "id": reserved.reservation.pk,
            "url": reserved.url,
            "headers": reserved.headers,
            "confirm_url": reverse("uploads:confirm", args=[notebook.pk, reserved.reservation.pk]),
        },
        status=201,
    )


@login_required
@require_POST
def confirm(request: HtmxHttpRequest, notebook_id: int, reservation_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    if not direct_uploads.available():
        raise Http404("Direct uploads need S3 storage.")
    # Someone else's reservation does not exist for this person.
    reservation = get_object_or_404(
        UploadReservation.objects.select_related("owner", "notebook"),
        pk=reservation_id,
        owner=request.user,
        notebook=notebook,
    )
    try:
        added = direct_uploads.confirm_upload(reservation=reservation)
    except UploadRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(
        {"source": added.source.pk, "created": added.created, "title": added.source.title},
        status=201 if added.created else 200,
    )
