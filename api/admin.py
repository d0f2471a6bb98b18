from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from api.models import AccessToken


@admin.register(AccessToken)
class AccessTokenAdmin(admin.ModelAdmin):
    """Tokens are seen and revoked here, never made: the secret is shown to its owner once."""

    list_display = ("name", "user", "scope", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("scope",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "name", "scope", "prefix", "created_at", "last_used_at")
    exclude = ("digest",)
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: object) -> None:
        for token in queryset:  # type: ignore[attr-defined]
            token.revoke()
