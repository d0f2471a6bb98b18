from __future__ import annotations

from django.urls import path

from ingest import views

app_name = "uploads"
urlpatterns = [
    path("reserve/", views.reserve, name="reserve"),
    path("<int:reservation_id>/confirm/", views.confirm, name="confirm"),
]
