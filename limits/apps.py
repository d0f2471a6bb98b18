from __future__ import annotations

from django.apps import AppConfig


class LimitsConfig(AppConfig):
    name = "limits"
    verbose_name = "Abuse limits"
