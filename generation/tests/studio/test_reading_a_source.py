"""How the offline documents read a source: paragraphs rebuilt from a PDF's wrapped lines,
the sentences worth quoting alone, and the definitions that say what a source is about."""

import pytest

from generation.documents.definitions import definition_of
from generation.documents.reading import Sentence
from language.sentences import paragraphs, stands_alone
from library.models import Chunk, Source


def sentence(text: str, language: str = "en", source_id: int = 1) -> Sentence:
    source = Source(pk=source_id, language=language)
    return Sentence(text=text, chunk=Chunk(source=source, text=text), section=("Basics",))


def test_wrapped_lines_are_joined_and_headings_notes_and_list_items_kept_apart():
    text = (
        "1.2.3 Filesystem permissions\n"
        "Filesystem permissions of Unix-like systems are defined for three categories of\n"
        "affected users.\n"
        "• The user who owns the file (u)\n"
        "Note\n"
        "the umask restricts what a new file gets.\n"
    )

    assert paragraphs(text, width=80) == [
        "1.2.3 Filesystem permissions",
        "Filesystem permissions of Unix-like systems are defined for three categories of "
        "affected users.",
        "The user who owns the file (u)",
        "Note",
        "the umask restricts what a new file gets.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "What permissions does a new file get from the umask?",  # a question
        "This document only gives efficient starting points for you.",  # about itself
        "The following commands show the state of the network.",  # leans on a list
        "The bug report goes to http://bugs.debian.org/package_name for you.",
        "This Debian Reference (version 2.100) is intended to provide an overview.",
        "The kernel 5.10.0 supports the new scheduler for all users.",
        "Debian uses the unifiedcgrouphierarchywithsystemd for its services.",  # run together
        "I always use this for files in the documentation directory.",  # the author
        "It is even possible to change the way the kernel works.",  # leans on the one before
        "See Section 1.2.2 for the details of the filesystem.",
        "Wählen Sie den Eintrag aus und drücken Sie die Eingabetaste.",  # a step
    ],
)
def test_a_sentence_that_cannot_stand_alone_is_not_quoted(text):
    assert not stands_alone(text)


def test_a_plain_statement_stands_alone_and_german_compounds_are_words():
    assert stands_alone("A named pipe is a file that acts like a pipe between programs.")
    german = "Die Netzwerkkonfigurationsdatei legt die Schnittstellen des Rechners fest."
    assert stands_alone(german, "de")
    assert not stands_alone(german, "en")  # 29 letters: two words run together in English


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("MTU is the maximum packet size without IP fragmentation on a link.", "MTU"),
        ("The whole thing viewed is called the directory tree.", "directory tree"),
        ("Autotools is a suite of tools designed for portability.", "Autotools"),
        ("Ein Inode ist eine Datenstruktur für die Attribute einer Datei.", "Inode"),
        ("Das Ganze betrachtet wird als Verzeichnisbaum bezeichnet.", "Verzeichnisbaum"),
        ("It is a very smart viewer for all kinds of files and archives.", None),
        ("The root directory is an exception among all the directories.", None),
        ("Ein populärer Anwendungsfall ist der Filter für Spam-Mails.", None),
        ("The 2nd argument is the distribution name of the archive.", None),
        ("There is a complete, detailed map called the ”SOURCE CODE”.", None),
        ("The GNU GPL is a license that keeps the software free for all.", "GNU GPL"),
    ],
)  # fmt: skip
def test_a_definition_names_its_term(text, term):
    language = "de" if " ist " in text or " wird " in text else "en"
    definition = definition_of(sentence(text, language))

    assert definition.term == term if term else definition is None
