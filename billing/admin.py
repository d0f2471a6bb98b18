from __future__ import annotations

from django.contrib import admin

from billing.models import Usage


@admin.register(Usage)
class UsageAdmin(admin.ModelAdmin):
    list_display = ["created_at", "user", "kind", "model", "input_tokens", "output_tokens"]
    list_filter = ["kind", "model"]
    search_fields = ["user__username", "model"]
