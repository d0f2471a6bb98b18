from __future__ import annotations

from django.contrib import admin

from library.models import Chunk, Source


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "kind", "status", "page_count", "chunk_count", "created_at"]
    list_filter = ["status", "kind"]
    search_fields = ["title", "filename", "owner__username", "sha256"]
    readonly_fields = ["sha256", "size_bytes", "created_at", "updated_at"]


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["source", "ordinal", "page", "embedding_model"]
    list_filter = ["embedding_model"]
    search_fields = ["text", "source__title"]
    exclude = ["embedding"]  # hundreds of floats help nobody in a form
    raw_id_fields = ["source"]
