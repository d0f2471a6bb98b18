"""Procrastinate's job pages in the admin, without the inline styles its own admin writes:
Loupe's Content-Security-Policy (style-src 'self') blocks them, and each one is a console
error. The same columns, styled by static/admin.css."""

from __future__ import annotations

import json

from django.contrib import admin
from django.utils.html import format_html
from procrastinate.contrib.django import models
from procrastinate.contrib.django.admin import ProcrastinateJobAdmin


class JobAdmin(ProcrastinateJobAdmin):
    @admin.display(description="Args")
    def pretty_args(self, instance: models.ProcrastinateJob) -> str:
        indent = 2 if len(instance.args) > 1 or len(str(instance.args)) > 30 else None
        pretty_json = json.dumps(instance.args, indent=indent)
        if len(pretty_json) > 2000:
            pretty_json = pretty_json[:2000] + "..."
        return format_html('<pre class="job-args">{}</pre>', pretty_json)


admin.site.unregister(models.ProcrastinateJob)
admin.site.register(models.ProcrastinateJob, JobAdmin)
