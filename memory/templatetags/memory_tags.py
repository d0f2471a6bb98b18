from __future__ import annotations

from typing import Any

from django import template

from memory.models import MAX_FACT_CHARS, MAX_FACTS
from memory.services import facts_for

register = template.Library()


@register.inclusion_tag("memory/_memories.html", takes_context=True)
def memory_panel(context: template.Context, notebook: Any, oob: bool = False) -> dict:
    """The signed-in person's remembered facts in the notebook, as the panel shows them;
    `oob`: sent beside a command's reply, so the panel shows what it changed."""
    request = context["request"]
    return {
        "request": request,
        "csrf_token": context.get("csrf_token"),
        "notebook": notebook,
        "memories": list(facts_for(user=request.user, notebook=notebook)),
        "max_chars": MAX_FACT_CHARS,
        "max_facts": MAX_FACTS,
        "oob": oob,
    }
