from __future__ import annotations

from django.contrib import admin

from memory.models import Memory


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ["text", "user", "notebook", "updated_at"]
    raw_id_fields = ["user", "notebook"]
    search_fields = ["text", "user__username"]
