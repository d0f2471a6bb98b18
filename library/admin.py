from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.utils.text import Truncator

from library.models import Chunk, EmbeddingState, Preferences, Source


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = [
        "title",
        "owner",
        "kind",
        "status",
        "page_count",
        "chunk_count",
        "summary_mode",
        "short_summary",
        "created_at",
    ]
    list_filter = ["status", "kind", "summary_mode"]
    search_fields = ["title", "filename", "owner__username", "sha256", "summary"]
    readonly_fields = [
        "sha256",
        "size_bytes",
        "stage",
        "summary",
        "summary_mode",
        "summary_error",
        "created_at",
        "updated_at",
    ]

    @admin.display(description="summary")
    def short_summary(self, source: Source) -> str:
        return Truncator(source.summary or source.summary_error).chars(100)


@admin.register(Preferences)
class PreferencesAdmin(admin.ModelAdmin):
    list_display = ["user", "pdf_capture"]
    search_fields = ["user__username"]
    raw_id_fields = ["user"]


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["source", "ordinal", "page", "embedding_model"]
    list_filter = ["embedding_model"]
    search_fields = ["text", "source__title"]
    exclude = ["embedding"]  # hundreds of floats help nobody in a form
    raw_id_fields = ["source"]


@admin.register(EmbeddingState)
class EmbeddingStateAdmin(admin.ModelAdmin):
    """Read-only: the active model and a switch's progress; `manage.py reembed` changes it."""

    list_display = ["active_model", "target_model", "progress_done", "progress_total"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
