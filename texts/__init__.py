"""Texts that workers and services store in the database, shown in the reader's language.

A worker has no reader: it fails a source at night, in no one's language. So such a text is
stored twice. Its English rendering goes into the field itself (`Source.error`), which the
command line's `--json` output, the logs and the admin show; beside it, the field
`<name>_i18n` keeps the English msgid and its parameters as JSON ({"msgid", "params"}), and a
page translates that when it shows the field (`{{ source|stored:"error" }}`, or `shown()`).

Model names, file names, addresses and exception texts are parameters, never translated. A
parameter may itself be a Text ("… Loupe will try again shortly." around the real reason).

The msgids are collected by `manage.py makemessages`, which knows `Text(...)` and
`Text.counted(...)` as keywords (texts/management/commands/makemessages.py).

A row whose `_i18n` is empty (written before this existed, or by code that stores a plain
string), or whose English no longer matches its stored text (a field changed or cut to
length without it), shows the stored text as it is: a translation never shows something other
than what the field says.
"""

from __future__ import annotations

import logging
from typing import Any, Union

from django.db import models
from django.utils import translation

logger = logging.getLogger(__name__)

Param = Union[str, int, float, "Text"]


class Text(str):
    """An English message that remembers its msgid and parameters.

    It is the English text itself (a `str`), so whatever stores, logs, prints or compares it
    sees exactly what it saw before; `translated()` renders it in the active language and
    `as_json()` is what a `<field>_i18n` column keeps. Anything made from it (a slice, a
    concatenation) is a plain str again, shown as it is.
    """

    msgid: str
    plural: str | None
    # The number a counted text's form depends on (not `count`: str has a method of that name).
    number: int | None
    params: dict[str, Param]

    def __new__(cls, msgid: str, /, **params: Param) -> Text:
        return cls._make(msgid, None, None, params)

    @classmethod
    def counted(cls, singular: str, plural: str, count: int, /, **params: Param) -> Text:
        """A message with a number in it (`%(count)s`), in the form that number needs."""
        return cls._make(singular, plural, count, {"count": count, **params})

    @classmethod
    def _make(
        cls, msgid: str, plural: str | None, count: int | None, params: dict[str, Param]
    ) -> Text:
        english = _render(msgid, plural, count, params, translate=False)
        text = super().__new__(cls, english)
        text.msgid, text.plural, text.number, text.params = msgid, plural, count, params
        return text

    def __repr__(self) -> str:
        return f"Text({str(self)!r})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled (an exception sent between processes) as what a column would store.
        return (Text.from_json, (self.as_json(),))

    def translated(self) -> str:
        """The message in the active language; English where the catalogue lacks it."""
        try:
            return _render(self.msgid, self.plural, self.number, self.params, translate=True)
        except (KeyError, ValueError, TypeError):
            # A translation whose placeholders do not fit its msgid: English beats nothing.
            logger.warning("translation of %r does not fit its parameters", self.msgid)
            return str(self)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "msgid": self.msgid,
            "params": {name: _param_as_json(value) for name, value in self.params.items()},
        }
        if self.plural is not None:
            data["plural"], data["count"] = self.plural, self.number
        return data

    @classmethod
    def from_json(cls, data: object) -> Text | None:
        """The Text stored as `data`; None for anything that is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("msgid"), str):
            return None
        raw_params = data.get("params") or {}
        if not isinstance(raw_params, dict):
            return None
        params: dict[str, Param] = {}
        for name, value in raw_params.items():
            if isinstance(value, dict):
                nested = cls.from_json(value)
                if nested is None:
                    return None
                params[name] = nested
            elif isinstance(value, str | int | float):
                params[name] = value
            else:
                return None
        plural, count = data.get("plural"), data.get("count")
        if plural is not None and (not isinstance(plural, str) or not isinstance(count, int)):
            return None
        try:
            return cls._make(data["msgid"], plural, count, params)
        except (KeyError, ValueError, TypeError):
            return None  # parameters that do not fit the msgid


def _render(
    msgid: str,
    plural: str | None,
    count: int | None,
    params: dict[str, Param],
    *,
    translate: bool,
) -> str:
    if plural is None:
        template = translation.gettext(msgid) if translate else msgid
    elif translate:
        template = translation.ngettext(msgid, plural, count or 0)
    else:
        template = msgid if count == 1 else plural
    if not params:
        return template  # a literal "%" in a message without parameters stays as it is
    values = {
        name: value.translated() if translate and isinstance(value, Text) else value
        for name, value in params.items()
    }
    return template % values


def _param_as_json(value: Param) -> Any:
    if isinstance(value, Text):
        return value.as_json()
    if isinstance(value, str | int | float):
        return value
    return str(value)  # a Path, a Decimal: stored as the English text showed it


def message_of(exc: BaseException) -> Text | str:
    """The message an exception was raised with: its Text when it has one, else its text."""
    if len(exc.args) == 1 and isinstance(exc.args[0], Text):
        return exc.args[0]
    return str(exc)


def translated(text: Text | str) -> str:
    """A message for the reader in front of us now (a request's language)."""
    return text.translated() if isinstance(text, Text) else text


def columns(
    field: str, text: Text | str, *, max_length: int | None = None
) -> dict[str, str | dict[str, Any] | None]:
    """The values of `field` and of `<field>_i18n` beside it that store `text`, for an
    `update()` or a `create()`."""
    english = str(text)
    if max_length is not None:
        english = english[:max_length]
    return {field: english, f"{field}_i18n": text.as_json() if isinstance(text, Text) else None}


def assign(instance: models.Model, field: str, text: Text | str) -> list[str]:
    """Set `field` (cut to its max_length) and its `_i18n` on the instance; returns both
    names, for `save(update_fields=...)`."""
    max_length = getattr(instance._meta.get_field(field), "max_length", None)
    values = columns(field, text, max_length=max_length)
    for name, value in values.items():
        setattr(instance, name, value)
    return list(values)


def shown(english: str, data: object) -> str:
    """A stored text in the active language: its Text translated, when it has one whose
    English is exactly the stored text; otherwise the stored text."""
    text = Text.from_json(data)
    if text is None or str(text) != english:
        return english
    return text.translated()
