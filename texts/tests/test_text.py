"""A Text is its English rendering, keeps its msgid and parameters, and is translated when
shown; a stored text without them, or whose English no longer matches, shows as stored."""

from __future__ import annotations

import pickle

from django.utils import translation

from texts import Text, assign, columns, message_of, shown

PROTECTED = (
    "This PDF is protected by a password. Upload a copy without password protection "
    "(for example, print it to a new PDF)."
)


def test_a_text_is_its_english_rendering():
    text = Text("The chat model %(model)s returned an empty answer.", model="gpt-x")

    assert text == "The chat model gpt-x returned an empty answer."
    assert str(Exception(text)) == "The chat model gpt-x returned an empty answer."
    # English even while a German request is being answered: it is what gets stored.
    with translation.override("de"):
        assert str(text) == "The chat model gpt-x returned an empty answer."


def test_a_text_is_translated_with_its_parameters_left_as_they_are():
    text = Text("The chat model %(model)s returned an empty answer.", model="gpt-x")

    with translation.override("de"):
        assert text.translated() == "Das Chat-Modell gpt-x hat eine leere Antwort geliefert."
    with translation.override("en"):
        assert text.translated() == "The chat model gpt-x returned an empty answer."


def test_a_nested_text_is_translated_inside_the_one_around_it():
    text = Text(
        "%(message)s Loupe will try again shortly.",
        message=Text(
            "Could not fetch %(url)s: %(error)s.",
            url="https://a.example/",
            error=Text("the server refused the connection"),
        ),
    )

    assert text == (
        "Could not fetch https://a.example/: the server refused the connection. "
        "Loupe will try again shortly."
    )
    with translation.override("de"):
        assert text.translated() == (
            "https://a.example/ konnte nicht abgerufen werden: der Server hat die Verbindung "
            "abgelehnt. Loupe versucht es in Kürze erneut."
        )


def test_a_counted_text_takes_the_form_its_number_needs():
    def skipped(count: int) -> Text:
        return Text.counted(
            "%(reader)s; %(count)s blank page skipped",
            "%(reader)s; %(count)s blank pages skipped",
            count,
            reader=Text("pypdf text layer"),
        )

    assert skipped(1) == "pypdf text layer; 1 blank page skipped"
    assert skipped(3) == "pypdf text layer; 3 blank pages skipped"
    with translation.override("de"):
        assert skipped(1).translated() == "pypdf-Textebene; 1 leere Seite übersprungen"
        assert skipped(3).translated() == "pypdf-Textebene; 3 leere Seiten übersprungen"


def test_a_text_survives_its_json_and_pickling():
    text = Text.counted(
        "%(text_reader)s + %(vision_reader)s (%(count)s page)",
        "%(text_reader)s + %(vision_reader)s (%(count)s pages)",
        2,
        text_reader=Text("pypdf text layer"),
        vision_reader=Text("vision model %(model)s", model="fake-vision"),
    )

    for copy in (Text.from_json(text.as_json()), pickle.loads(pickle.dumps(text))):
        assert copy == text == "pypdf text layer + vision model fake-vision (2 pages)"
        assert copy.as_json() == text.as_json()
        with translation.override("de"):
            assert copy.translated() == "pypdf-Textebene + Bildmodell fake-vision (2 Seiten)"


def test_a_stored_text_is_shown_translated_only_when_its_english_matches():
    data = Text(PROTECTED).as_json()

    with translation.override("de"):
        assert shown(PROTECTED, data).startswith("Dieses PDF ist durch ein Passwort geschützt.")
        # Written before texts were stored with their msgid: shown as stored.
        assert shown("The PDF is encrypted.", None) == "The PDF is encrypted."
        # The field changed without its msgid (or was cut to length): the field wins.
        assert shown("Something else happened.", data) == "Something else happened."
        assert shown(PROTECTED[:40], data) == PROTECTED[:40]
        # Whatever else is in the column is no msgid.
        for junk in ("text", ["msgid"], {"msgid": 3}, {"msgid": "%(a)s", "params": {"b": 1}}):
            assert shown(PROTECTED, junk) == PROTECTED


def test_a_message_not_in_the_catalogue_is_shown_in_english():
    msgid = "A message nobody translated (%(n)s)."  # a variable: makemessages skips it
    text = Text(msgid, n=1)

    with translation.override("de"):
        assert shown(str(text), text.as_json()) == "A message nobody translated (1)."


def test_columns_and_assign_store_the_english_and_the_msgid_side_by_side():
    from library.models import Source

    source = Source(summary_error="")
    long_reason = Text("No summary: %(reason)s", reason="x" * 600)

    fields = assign(source, "summary_error", long_reason)

    assert fields == ["summary_error", "summary_error_i18n"]
    assert source.summary_error == str(long_reason)[:500]  # cut to the column's length
    assert source.summary_error_i18n == long_reason.as_json()
    assert columns("error", "typed by an admin") == {
        "error": "typed by an admin",
        "error_i18n": None,
    }


def test_the_message_of_an_exception_is_its_text_when_it_has_one():
    text = Text("This PDF has no pages.")

    assert message_of(ValueError(text)) is text
    assert message_of(ValueError("plain")) == "plain"
    assert not isinstance(message_of(ValueError("a", "b")), Text)
