from __future__ import annotations

from django.urls import path

from api import completions

# Included at /v1/ (config/urls.py): where OpenAI's clients look, given base_url=<site>/v1.
app_name = "openai"
urlpatterns = [
    path("models", completions.models, name="models"),
    path("chat/completions", completions.chat_completions, name="chat_completions"),
]
