from __future__ import annotations

from django.urls import path

from analytics import views

app_name = "analytics"
urlpatterns = [
    path("notebooks/<int:notebook_id>/analytics/", views.notebook_page, name="notebook"),
    path("analytics/", views.site_page, name="site"),
]
