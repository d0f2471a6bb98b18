"""The tokens page: create (the token shown once), list with last use, revoke."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from api.forms import TokenForm
from api.models import AccessToken
from api.tokens import TokenRefused, create_token, revoke_token, tokens_of
from web.forms import bad_request


class AuthenticatedRequest(HttpRequest):
    user: User  # every view here is @login_required


def _page(request: AuthenticatedRequest, **extra: object) -> HttpResponse:
    context = {"tokens": tokens_of(request.user), "scopes": AccessToken.Scope.choices, **extra}
    return render(request, "api/tokens.html", context)


@login_required
@require_GET
def tokens(request: AuthenticatedRequest) -> HttpResponse:
    return _page(request)


@login_required
@require_POST
def create(request: AuthenticatedRequest) -> HttpResponse:
    form = TokenForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    name = form.cleaned_data["name"]
    try:
        made = create_token(user=request.user, name=name, scope=form.cleaned_data["scope"])
    except TokenRefused as exc:
        return _page(request, error=str(exc), name=name)
    # Shown in this response only: it is stored hashed, and a reload shows the list alone.
    response = _page(request, new=made)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def revoke(request: AuthenticatedRequest, token_id: int) -> HttpResponse:
    try:
        revoke_token(user=request.user, token_id=token_id)
    except TokenRefused as exc:
        raise Http404(str(exc)) from exc
    return redirect("tokens:list")
