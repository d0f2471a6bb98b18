from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from sharing.models import AuditEvent, Membership


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["notebook", "user", "role", "added_by", "created_at"]
    list_filter = ["role"]
    search_fields = ["notebook__title", "user__username", "notebook__owner__username"]
    raw_id_fields = ["notebook", "user", "added_by"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """The record of who shared and published what, and when: read-only, as a record is."""

    list_display = ["created_at", "actor_name", "action", "subject", "member_name", "role"]
    list_filter = ["action"]
    search_fields = ["actor_name", "member_name", "subject"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
