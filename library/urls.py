from __future__ import annotations

from django.urls import path

from library import views

app_name = "library"
urlpatterns = [
    path("library/", views.library, name="library"),
    path(
        "library/sources/<int:source_id>/add-to-notebook/",
        views.add_to_notebook,
        name="add_to_notebook",
    ),
    path(
        "library/sources/<int:source_id>/delete/",
        views.delete_source,
        name="delete_source",
    ),
    path("preferences/", views.preferences, name="preferences"),
]
