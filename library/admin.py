from __future__ import annotations

from django.contrib import admin
from django.utils.text import Truncator

from library.models import Chunk, Preferences, Source


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
