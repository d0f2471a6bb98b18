from __future__ import annotations

from django.urls import path

from sharing import views

app_name = "sharing"
urlpatterns = [
    path("notebooks/<int:notebook_id>/sharing/", views.notebook, name="notebook"),
    path("notebooks/<int:notebook_id>/sharing/add/", views.share, name="share"),
    path(
        "notebooks/<int:notebook_id>/sharing/<int:membership_id>/revoke/",
        views.revoke,
        name="revoke",
    ),
    path("notebooks/<int:notebook_id>/sharing/leave/", views.leave, name="leave"),
    path("library/public/", views.public_library, name="public_library"),
    path("library/sources/<int:source_id>/publish/", views.publish, name="publish"),
    path("library/sources/<int:source_id>/unpublish/", views.unpublish, name="unpublish"),
]
