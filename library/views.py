"""A person's preferences; everyone sees and changes only their own."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from library.forms import PreferencesForm
from library.models import Preferences


class AuthenticatedHttpRequest(HttpRequest):
    user: User  # every view here is @login_required


@login_required
@require_http_methods(["GET", "POST"])
def preferences(request: AuthenticatedHttpRequest) -> HttpResponse:
    data = request.POST if request.method == "POST" else None
    form = PreferencesForm(data, instance=Preferences.of(request.user))
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Your preferences are saved.")
        return redirect("library:preferences")
    return render(request, "library/preferences.html", {"form": form})
