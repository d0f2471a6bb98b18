from __future__ import annotations

from django.contrib import admin

from notebooks.models import Citation, Conversation, Message, Notebook


@admin.register(Notebook)
class NotebookAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "created_at"]
    search_fields = ["title", "owner__username"]


class MessageInline(admin.TabularInline):
    model = Message
    fields = readonly_fields = ("role", "mode", "model", "content", "search_query")
    extra = 0


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["id", "notebook", "user", "posted", "created_at"]
    raw_id_fields = ["notebook", "user"]
    inlines = [MessageInline]


@admin.register(Citation)
class CitationAdmin(admin.ModelAdmin):
    list_display = ["message", "n", "source_title", "page", "similarity"]
    raw_id_fields = ["message", "chunk", "source"]
