from __future__ import annotations

from django import template

from ops.first_run import DEMO_USERNAME, demo_login_hint

register = template.Library()


@register.simple_tag
def demo_login() -> dict[str, str]:
    """The demo user and the file that keeps its password, on a local install only."""
    path = demo_login_hint()
    return {"username": DEMO_USERNAME, "file": path} if path else {}
