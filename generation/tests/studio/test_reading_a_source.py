"""How the offline documents read a source: paragraphs rebuilt from a PDF's wrapped lines,
the sentences worth quoting alone, the real figures and dated events, and the definitions a
quiz or a flashcard asks about."""

import random

import pytest

from generation.documents.definitions import Definition, blanked, definition_of
from generation.documents.figures import events_of, figures_of
from generation.documents.kinds.quiz import distractors
from generation.documents.reading import Sentence
from library.models import Chunk, Source
from library.sentences import paragraphs, stands_alone


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
    ("text", "values"),
    [
        ("Currently, there are 68980 packages for the amd64 architecture.", ["68980 packages"]),
        ("The number of non-free packages is less than 2% of the main packages.", ["less than 2%"]),
        ("A grey heron stands about 95 cm tall, up to 2 kg.", ["about 95 cm", "up to 2 kg"]),
        ("A password has at least 6 to 8 characters of a class.", ["at least 6 to 8 characters"]),
        ("Section 1.2 describes the options of the shell in some detail.", []),
        ("There are 2 types of device files on a Debian system.", []),  # too few to count
        ("The train leaves Vienna at 20:15 and arrives the next morning.", []),
        ("Debian 11 uses the unified cgroup hierarchy for its services.", []),
    ],
)  # fmt: skip
def test_figures_are_quantities_shares_and_counts_never_section_numbers(text, values):
    assert [figure.value for figure in figures_of(sentence(text))] == values


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("The init program is systemd after Debian 8 Jessie (released in 2015).", ["2015"]),
        ("As of April 2021, many applications have been migrated to Wayland.", ["April 2021"]),
        ("The population in Britain grew by 25 % between 1990 and 2020.", ["1990", "2020"]),
        ("The mistakes are listed on a page of the site under 2001 and shell.", []),
        ("The standard ISO 8601 defines how dates are written in files.", []),
    ],
)
def test_an_event_is_a_date_or_a_year_a_word_places_in_time(text, dates):
    assert [event.date for event in events_of(sentence(text))] == dates


@pytest.mark.parametrize(
    ("text", "term", "kind"),
    [
        ("MTU is the maximum packet size without IP fragmentation on a link.", "MTU", "acronym"),
        ("The whole thing viewed is called the directory tree.", "directory tree", "phrase"),
        ("Autotools is a suite of tools designed for portability.", "Autotools", "name"),
        ("Ein Inode ist eine Datenstruktur für die Attribute einer Datei.", "Inode", "name"),
        ("Das Ganze betrachtet wird als Verzeichnisbaum bezeichnet.", "Verzeichnisbaum", "name"),
        ("It is a very smart viewer for all kinds of files and archives.", None, None),
        ("The root directory is an exception among all the directories.", None, None),
        ("Ein populärer Anwendungsfall ist der Filter für Spam-Mails.", None, None),
        ("The 2nd argument is the distribution name of the archive.", None, None),
        ("There is a complete, detailed map called the ”SOURCE CODE”.", None, None),
        ("The GNU GPL is a license that keeps the software free for all.", "GNU GPL", "name"),
    ],
)  # fmt: skip
def test_a_definition_names_its_term_and_the_kind_of_term(text, term, kind):
    language = "de" if " ist " in text or " wird " in text else "en"
    definition = definition_of(sentence(text, language))

    assert (definition.term, definition.kind) == (term, kind) if term else definition is None


def test_the_blank_hides_every_use_of_the_term_quoted_or_not():
    text = "The ”MTU” is the largest packet; a bigger MTU is generally better."

    assert (
        blanked(text, "MTU", "___")
        == "The ___ is the largest packet; a bigger ___ is generally better."
    )


def test_wrong_options_are_terms_of_the_same_kind_from_the_same_source():
    def defined(term: str, kind: str, source_id: int = 1) -> Definition:
        return Definition(
            term, sentence(f"{term} is a thing of its kind.", source_id=source_id), kind
        )

    answer = defined("MTU", "acronym")
    pool = [
        answer,
        defined("PAM", "acronym"),
        defined("LVM2", "acronym"),
        defined("directory tree", "phrase"),
        defined("Autotools", "name"),
        defined("NSS", "acronym", source_id=2),  # another source
    ]

    options = distractors(answer, pool, random.Random(0))

    assert sorted(options) == ["LVM2", "PAM"]
