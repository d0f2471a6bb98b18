"""Cutting a passage into quotable units, on text as the Debian Reference's PDFs give it."""

# ruff: noqa: E501 (the manual's lines are quoted as its PDF breaks them)

from generation.passage_units import reflow, split_sentences, units

MTU = ("Network setup", "5.5 Network optimization", "5.5.1 Finding optimal MTU")
MTU_PAGE = """5.5.1 Finding optimal MTU
NM normally sets optimal Maximum Transmission Unit (MTU) automatically.
In some occasion, you may wish to set MTU manually after experiments with ping(8) with ”-M do” option to send a ICMP
packet with various data packet size. MTU is the maximum succeeding data packet size without IP fragmentation plus 28 bytes
for the IPv4 and plus 48 bytes for the IPv6. For example the following finds MTU for IPv4 connection to be 1460 and MTU for
IPv6 connection to be 1500.
$ ping -4 -c 1 -s $((1500-28)) -M do www.debian.org
PING (149.20.4.15) 1472(1500) bytes of data.
ping: local error: message too long, mtu=1460
--- ping statistics ---
1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms
$ ping -4 -c 1 -s $((1460-28)) -M do www.debian.org
PING (130.89.148.77) 1432(1460) bytes of data.
NM normally sets it right."""

JOURNAL_TABLE = """Operation Command snippets
View log for system services and kernel from
the last boot ”journalctl -b --system”
View log for services of the current user from
the last boot ”journalctl -b --user”
View job log of ”$unit” from the last boot ”journalctl -b -u $unit”
Table 3.5: List of typical journalctl command snippets"""


def test_a_command_keeps_its_output_and_prose_after_it_is_a_sentence_again():
    found = units(MTU_PAGE, section=MTU)

    texts = [unit.text for unit in found]
    assert texts[0] == "NM normally sets optimal Maximum Transmission Unit (MTU) automatically."
    assert texts[2].startswith("MTU is the maximum succeeding data packet size")
    first, second = (unit for unit in found if unit.code)
    assert first.text.splitlines() == [
        "$ ping -4 -c 1 -s $((1500-28)) -M do www.debian.org",
        "PING (149.20.4.15) 1472(1500) bytes of data.",
        "ping: local error: message too long, mtu=1460",
        "--- ping statistics ---",
        "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms",
    ]
    assert second.text.startswith("$ ping -4 -c 1 -s $((1460-28))")
    assert texts[-1] == "NM normally sets it right."
    assert not found[-1].code


def test_table_rows_stay_apart_and_a_cell_wrapped_after_from_is_joined():
    found = units(JOURNAL_TABLE, section=("The system initialization", "3.4 The system message"))

    assert [unit.text for unit in found] == [
        "Operation Command snippets",
        "View log for system services and kernel from the last boot ”journalctl -b --system”",
        "View log for services of the current user from the last boot ”journalctl -b --user”",
        "View job log of ”$unit” from the last boot ”journalctl -b -u $unit”",
    ]


def test_abbreviations_and_initials_do_not_end_a_sentence():
    assert split_sentences(
        "Sie können die Cache-Funktionalität testen, für ”/dev/sda” z.B. mit ”hdparm -W /dev/sda”. "
        "• Esc + n-Taste → Fn (d.h. Esc + 1 → F1). Die Werte, z. B. 990, gelten e.g. hier."
    ) == [
        "Sie können die Cache-Funktionalität testen, für ”/dev/sda” z.B. mit ”hdparm -W /dev/sda”.",
        "• Esc + n-Taste → Fn (d.h. Esc + 1 → F1).",
        "Die Werte, z. B. 990, gelten e.g. hier.",
    ]


def test_what_a_unit_says_about_itself():
    found = units(
        "In diesem Abschnitt geht es um Pakete. Welche Codenamen wurden in der Vergangenheit "
        "verwendet? Es wird empfohlen, stable zu nutzen. Es gibt viele Pakete. Das Lesen einer "
        "Datei ändert atime nicht. Siehe Abschnitt 2.1.\nSie können dies so einstellen:\n$ echo $?"
    )

    flags = {
        unit.text: {
            name
            for name in ("question", "about_document", "depends_on_previous", "introduces_next")
            if getattr(unit, name)
        }
        for unit in found
    }
    assert flags == {
        "In diesem Abschnitt geht es um Pakete.": {"about_document"},
        "Welche Codenamen wurden in der Vergangenheit verwendet?": {"question"},
        "Es wird empfohlen, stable zu nutzen.": {"depends_on_previous"},
        "Es gibt viele Pakete.": set(),
        "Das Lesen einer Datei ändert atime nicht.": set(),
        "Siehe Abschnitt 2.1.": {"about_document"},
        "Sie können dies so einstellen:": {"introduces_next"},
        "$ echo $?": set(),
    }


def test_a_table_row_opening_with_a_number_is_no_heading():
    found = units(
        "Pin-Priorität apt-pinning-Effekte auf das Paket\n"
        "1001 das Paket installieren, auch wenn dies ein Downgrade des Pakets bedeutet\n"
        "990 wird als Standardwert für das Archiv der Zielveröffentlichung verwendet\n"
        "Tabelle 2.18: Liste erwähnenswerter Pin-Prioritäts-Werte für apt-pinning\n"
        "2.7.8 Versionsauswahl\n"
        "4. Netzwerk"
    )

    texts = [unit.text for unit in found]
    assert any(
        text.endswith("990 wird als Standardwert für das Archiv der Zielveröffentlichung verwendet")
        for text in texts
    )
    assert not any(
        "Tabelle" in text or "Versionsauswahl" in text or "Netzwerk" in text for text in texts
    )


def test_markdown_headings_are_no_units_while_roots_commands_stay_commands():
    note = """# Nachtzüge

Nachtzüge fahren von Wien nach Hamburg. Der Schlafwagen kostet 120 Euro.

## Schlafwagen

Ein Schlafwagen hat Abteile mit zwei Betten.

# apt-get install sleeper"""

    found = units(note, section=("Nachtzüge",))

    texts = [unit.text for unit in found]
    assert not any(text.lstrip().startswith(("# N", "## ")) for text in texts)
    assert "Ein Schlafwagen hat Abteile mit zwei Betten." in texts
    (command,) = (unit for unit in found if unit.code)
    assert command.text == "# apt-get install sleeper"


def test_a_sentence_opening_with_a_manual_page_in_lower_case_is_a_sentence_of_its_own():
    found = split_sentences(
        "chown(1) is used from the root account to change the owner of the file. chgrp(1) is "
        "used from the file’s owner or root account to change the group of the file. See "
        "also etc. and more."
    )

    assert found == [
        "chown(1) is used from the root account to change the owner of the file.",
        "chgrp(1) is used from the file’s owner or root account to change the group of the file.",
        "See also etc. and more.",
    ]


def test_a_sentence_ending_in_the_following_announces_what_follows():
    found = units(
        "For Debian Salsa service with account name ”foo-guest”, you set ”~/.ssh/config” to contain the following.\n"
        "Host salsa.debian.org people.debian.org\n"
        "Kompilieren und installieren Sie ein Paket mit folgendem Befehl.\n"
        "The following packages are needed for it."
    )

    assert [unit.introduces_next for unit in found] == [True, False, True, False]


def test_a_sentence_cut_off_on_a_line_holding_sentences_before_it_is_marked_as_cut():
    # A text file's paragraph is one line; the chunk ends inside its last sentence.
    found = units(
        "The UPR pathway regulates protein folding. In order to regulate cellular homeostasis, "
        "the UPR pathway has developed three classes of sensors: inositolrequiring enzyme 1 "
        "(IRE1), protein kinase RNA-like ER kinase (PERK), and activating transcription factor 6 (ATF6"
    )

    assert [unit.cut_off for unit in found] == [False, True]


ACTIVITY_LOGS_SECTION = ("Debian package management", "2.2.9 Package activity logs")
ACTIVITY_LOGS = """2.2.9 Package activity logs
You can check package activity history in the log files.
file content
/var/log/dpkg.log Log of dpkg level activity for all package activities
/var/log/apt/term.log Log of generic APT activity
/var/log/aptitude Log of aptitude command activity
Table 2.12: The log files for package activities
In reality, it is not so easy to get meaningful understanding quickly out from these logs. See Section 9.3."""


def test_a_sentence_ending_short_of_the_longest_line_is_not_glued_to_the_table_after_it():
    # Most of these lines are short, so the usual width (that of the longer lines) is
    # not the page's: the sentence's end decides.
    found = units(ACTIVITY_LOGS, section=ACTIVITY_LOGS_SECTION)

    texts = [unit.text for unit in found]
    assert texts[0] == "You can check package activity history in the log files."
    assert "file content" in texts


def test_reflowing_joins_the_lines_a_paragraph_wraps_and_keeps_every_other_break():
    shown = reflow(MTU_PAGE, section=MTU)

    assert len(shown) == len(MTU_PAGE)  # offsets into the chunk still hold
    assert shown.splitlines()[2].startswith("In some occasion, you may wish to set MTU manually")
    assert shown.splitlines()[2].endswith("MTU for IPv6 connection to be 1500.")
    assert shown.splitlines()[3:5] == [
        "$ ping -4 -c 1 -s $((1500-28)) -M do www.debian.org",
        "PING (149.20.4.15) 1472(1500) bytes of data.",
    ]
    assert reflow(JOURNAL_TABLE) == JOURNAL_TABLE.replace("from\nthe last", "from the last")
