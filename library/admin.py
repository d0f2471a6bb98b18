from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from library.models import Chunk, EmbeddingState, Preferences, Source
from sharing import services


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
        "public",
        "created_at",
    ]
    list_filter = ["status", "kind", "summary_mode", "public"]
    actions = ["publish", "unpublish"]
    search_fields = ["title", "filename", "owner__username", "sha256", "summary"]
    readonly_fields = [
        "sha256",
        "size_bytes",
        "stage",
        "summary",
        "summary_mode",
        "summary_error",
        # Publishing goes through the actions below, which apply sharing/access.py's rule
        # and write the audit log; an editable checkbox would do neither.
        "public",
        "published_by",
        "published_at",
        "created_at",
        "updated_at",
    ]

    @admin.action(description="Publish to the public library")
    def publish(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._each(request, queryset, services.publish, "published")

    @admin.action(description="Unpublish from the public library")
    def unpublish(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._each(request, queryset, services.unpublish, "unpublished")

    def _each(self, request: HttpRequest, queryset: QuerySet[Source], act, done: str) -> None:
        count = 0
        for source in queryset:
            try:
                act(source=source, actor=request.user)
            except (PermissionDenied, services.SharingError) as exc:
                self.message_user(request, f"{source}: {exc}", level=messages.ERROR)
            else:
                count += 1
        if count:
            self.message_user(request, f"{count} source(s) {done}.", level=messages.SUCCESS)

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
