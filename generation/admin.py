from __future__ import annotations

from django.contrib import admin

from generation.documents.models import DocumentCitation, GeneratedDocument


class DocumentCitationInline(admin.TabularInline):
    model = DocumentCitation
    extra = 0
    fields = ("n", "source_title", "page", "quote", "similarity", "supported")
    readonly_fields = fields
    can_delete = False


@admin.register(GeneratedDocument)
class GeneratedDocumentAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "kind", "status", "mode", "language", "notebook", "owner"]
    list_filter = ["kind", "status", "mode"]
    search_fields = ["title", "notebook__title", "owner__username"]
    readonly_fields = ["source", "created_at", "updated_at"]
    raw_id_fields = ["notebook", "owner"]
    inlines = [DocumentCitationInline]
