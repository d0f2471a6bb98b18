from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from api.v1.api import api as api_v1
from limits.views import ThrottledLoginView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="notebooks:list"), name="home"),
    # Sign-in with throttling of failed attempts (limits/views.py).
    path("login/", ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("notebooks/", include("notebooks.urls")),
    # Direct uploads to S3: reserve, then confirm (ingest/direct_uploads.py).
    path("notebooks/<int:notebook_id>/uploads/", include("ingest.urls")),
    # The facts a person asked the chat to remember, on the notebook page: namespace "memory".
    path("notebooks/<int:notebook_id>/memory/", include("memory.urls")),
    # Generated documents (reports, quizzes, …) of a notebook: namespace "studio".
    path("notebooks/<int:notebook_id>/studio/", include("generation.urls")),
    path("usage/", include("billing.urls")),
    # Each question's figures: a notebook's page and the site's (analytics/).
    path("", include("analytics.urls")),
    # The library page (library/) and the preferences (preferences/).
    path("", include("library.urls")),
    # Sharing notebooks and the public library (sharing/urls.py).
    path("", include("sharing.urls")),
    # set_language: the language switcher in the header posts here.
    # Personal access tokens (api/), the JSON API and its OpenAPI document (docs/api.md).
    path("", include("api.urls")),
    path("api/v1/", api_v1.urls),
    # OpenAI-compatible: /v1/models and /v1/chat/completions (api/completions.py).
    path("v1/", include("api.urls_openai")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]

# A lost database answers 503 "not reachable; retrying…" instead of a 500 (ops/outage.py).
handler500 = "ops.outage.server_error"
