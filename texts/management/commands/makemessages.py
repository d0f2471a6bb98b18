from __future__ import annotations

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    # Texts stored by workers are marked by their constructor, translated when shown
    # (texts/__init__.py); Django's documented way to pass xgettext more keywords.
    xgettext_options = [
        *makemessages.Command.xgettext_options,
        "--keyword=Text",
        "--keyword=counted:1,2",
    ]
