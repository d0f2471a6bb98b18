from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="notebooks:list"), name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("notebooks/", include("notebooks.urls")),
    path("usage/", include("billing.urls")),
    path("preferences/", include("library.urls")),
    path("admin/", admin.site.urls),
]
