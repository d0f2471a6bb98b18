from __future__ import annotations

from django.urls import path

from api import views

# Included at the site's root (config/urls.py): the tokens page.
app_name = "tokens"
urlpatterns = [
    path("tokens/", views.tokens, name="list"),
    path("tokens/new/", views.create, name="create"),
    path("tokens/<int:token_id>/revoke/", views.revoke, name="revoke"),
]
