from ingest.passages import Passage
from ingest.structure import SectionStart
from ingest.summaries import extractive_summary, summarize


def test_an_extractive_summary_stays_near_a_hundred_and_twenty_words():
    text = " ".join(f"Herons wait by pond {n} for fish in the morning." for n in range(200))

    summary = extractive_summary(text)

    assert 0 < len(summary.split()) <= 120
    assert summary in text


def test_a_text_without_sentences_has_an_empty_extractive_summary():
    assert extractive_summary("  ... --- ") == ""


def _manual(language: str = "en") -> list[Passage]:
    """Three chapters of a manual as a PDF's pages give them: heading lines and a note's
    label on lines of their own."""
    chapters = {
        "en": ["1 Console basics", "2 Package management", "3 Network setup"],
        "de": ["1 Grundlagen der Konsole", "2 Paketverwaltung", "3 Netzwerk"],
    }[language]
    body = {
        "en": [
            "The shell prompt appears after you log in to the system with your account.\nNote\n"
            "The username and the password of the system are case sensitive in every shell.",
            "The package manager installs consistent sets of binary packages from the archive.",
            "The network is configured by the network manager of the desktop environment.",
        ],
        "de": [
            "Die Eingabeaufforderung der Shell erscheint nach der Anmeldung am System.",
            "Die Paketverwaltung installiert konsistente Sätze von Binärpaketen aus dem Archiv.",
            "Das Netzwerk wird vom Netzwerkmanager der Arbeitsumgebung eingerichtet.",
        ],
    }[language]
    return [
        Passage(
            text=f"{title}\n{text}",
            page=number,
            sections=(SectionStart(offset=0, path=(title,)),),
        )
        for number, (title, text) in enumerate(zip(chapters, body, strict=True), start=1)
    ]


def test_an_extractive_summary_leaves_out_headings_and_labels_and_names_the_chapters(settings):
    settings.SOURCE_SUMMARIES = "extractive"

    summary = summarize(passages=_manual(), title="Manual", language="en", user=None)

    assert summary.mode == "extractive"
    assert "Console basics The shell prompt" not in summary.text
    assert "Note The username" not in summary.text
    assert "The shell prompt appears after you log in" in summary.text
    assert summary.text.endswith("3 parts: Console basics, Package management, Network setup.")


def test_the_chapters_are_named_in_the_documents_language(settings):
    settings.SOURCE_SUMMARIES = "extractive"

    summary = summarize(passages=_manual("de"), title="Handbuch", language="de", user=None)

    assert summary.text.endswith("3 Teile: Grundlagen der Konsole, Paketverwaltung, Netzwerk.")


def test_a_sentence_restating_one_already_chosen_is_left_out():
    text = " ".join(
        f"A {thing} name is shown in the typewriter font between double quotation marks."
        for thing in ("file", "directory", "command", "package")
    )

    summary = extractive_summary(text)

    assert summary.count("typewriter font") == 1


def test_a_sentence_that_says_what_something_is_is_preferred():
    text = " ".join(
        [
            "River otters swim in the rivers and catch fish in the rivers of the valley every day.",
            "The sea otter is a marine mammal that lives along the coasts of the North Pacific.",
            "Young otters play in the rivers of the valley while the old otters catch fish.",
            "Otters catch fish in cold rivers and eat them on the river banks of the valley.",
        ]
    )

    summary = extractive_summary(text, words=18)  # room for one sentence

    assert summary == (
        "The sea otter is a marine mammal that lives along the coasts of the North Pacific."
    )
