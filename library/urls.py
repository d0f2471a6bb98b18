from __future__ import annotations

from django.urls import path

from library import views

app_name = "library"
urlpatterns = [
    path("", views.preferences, name="preferences"),
]
