from __future__ import annotations

from django.urls import path

from billing import views

app_name = "billing"
urlpatterns = [
    path("", views.usage, name="usage"),
]
