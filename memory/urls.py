from __future__ import annotations

from django.urls import path

from memory import views

app_name = "memory"
urlpatterns = [
    path("", views.panel, name="panel"),
    path("add/", views.add, name="add"),
    path("<int:memory_id>/", views.change, name="change"),
    path("<int:memory_id>/forget/", views.forget, name="forget"),
]
