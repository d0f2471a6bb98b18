from __future__ import annotations

from django.contrib import admin

from analytics.models import QuestionLog


@admin.register(QuestionLog)
class QuestionLogAdmin(admin.ModelAdmin):
    list_display = ["question", "notebook", "user", "mode", "total_ms", "created_at"]
    list_filter = ["mode", "refused"]
    search_fields = ["question", "user__username"]
    raw_id_fields = ["notebook", "user", "message"]
    readonly_fields = [field.name for field in QuestionLog._meta.fields]
