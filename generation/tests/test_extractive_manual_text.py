"""The extractive answer on text as the Debian Reference's PDFs give it (../shared/data/
manual-qa): wrapped lines, headings and table rows on lines of their own, commands."""

# ruff: noqa: E501 (the manual's lines are quoted as its PDF breaks them)

from generation import extractive
from generation.extractive.weights import MAX_ITEM_CHARS
from generation.passage_units import units
from generation.tests.test_passage_units import ACTIVITY_LOGS, ACTIVITY_LOGS_SECTION

SYSTEMD = ("The system initialization", "3.2 Systemd init")
SYSTEMD_PAGE = """3.2 Systemd init
This section describes how system is started by the systemd(1) program with PID=1 (i.e., init process).
The systemd init process spawns processes in parallel based on the unit configuration files (see systemd.unit(5)) which
are written in declarative style instead of SysV-like procedural style."""

MESSAGES = ("The system initialization", "3.4 The system message")
MESSAGES_PAGE = """3.4 The system message
Under systemd, both kernel and system messages are logged by the journal service systemd-journald.service (a.k.a
journald) either into a persistent binary data below ”/var/log/journal” or into a volatile binary data below ”/run/log/journal/”.
These binary log data are accessed by the journalctl(1) command. For example, you can display log from the last boot as:
$ journalctl -b
Under systemd, the system logging utility rsyslogd(8) may be uninstalled."""

FILESYSTEM = ("GNU/Linux tutorials", "1.2 Unix-like filesystem", "1.2.2 Filesystem internals")
FILESYSTEM_PAGE = """1.2.2 Filesystem internals
Following the Unix tradition, the Debian GNU/Linux system provides the filesystem under which physical data on hard disks
and other storage devices reside, and the interaction with the hardware devices such as console screens and remote serial consoles
are represented in an unified manner under ”/dev/”."""

# Two consecutive chunks of page 35: the second begins with the first's last fifty tokens.
FILE_BASICS = ("GNU/Linux tutorials", "1.2 Unix-like filesystem", "1.2.1 Unix file basics")
FILE_BASICS_END = """• There’s no special directory path name component that corresponds to a physical device, such as your hard disk. This differs
from RT-11, CP/M, OpenVMS, MS-DOS, AmigaOS, and Microsoft Windows, where the path contains a device name such as
”C:\\”. (However, directory entries do exist that refer to physical devices as a part of the normal filesystem. See Section 1.2.2.)
Note
While you can use almost any letters or symbols in a file"""
FILE_NAMES = """such as
”C:\\”. (However, directory entries do exist that refer to physical devices as a part of the normal filesystem. See Section 1.2.2.)
Note
While you can use almost any letters or symbols in a file name, in practice it is a bad idea to do so. It is better to
avoid any characters that often have special meanings on the command line, including spaces, tabs, newlines, and
other special characters. If you want to separate
words in a name, good choices are the period, hyphen, and underscore. You could also capitalize each word,
”LikeThis”. Experienced Linux users tend to avoid spaces in filenames."""

HOSTNAME = ("Die Systeminitialisierung", "3.2 Systemd-Init", "3.2.1 Der Rechnername")
HOSTNAME_PAGE = """3.2.1 Der Rechnername
Der Kernel verwaltet den Rechnernamen (hostname) des Systems. Die durch systemd-hostnamed.service gestartete
System-Unit setzt beim Systemstart den Rechnernamen auf den in ”/etc/hostname” festgelegten Wert. Diese Datei sollte
nur den Rechnernamen des Systems enthalten, nicht einen vollqualifizierten Domänennamen.
Um den derzeitigen Rechnernamen auszugeben, führen Sie hostname(1) ohne ein Argument aus."""

RPM = ("Datenkonvertierung", "11.7 Verschiedene Datenkonvertierungen")
RPM_PAGE = """11.7 Verschiedene Datenkonvertierungen
Es gibt viele andere Programme zum Konvertieren von Daten. Folgende Pakete habe ich über den regulären Ausdruck ”~Guse::converting”
in aptitude(8) gefunden (Näheres dazu in Abschnitt 2.2.6):
Sie können die Daten aus einem RPM-Archiv auch mit folgendem Befehl extrahieren:
$ rpm2cpio file.src.rpm | cpio --extract"""

SAFEGUARDS = (
    "Debian-Paketmanagement",
    "2.4 Erweiterte Paketmanagement-Operationen",
    "2.4.3 Absicherungen für den Fall von Paketproblemen",
)
SAFEGUARDS_PAGE = """2.4.3 Absicherungen für den Fall von Paketproblemen
Viele Benutzer bevorzugen die Unstable-Veröffentlichung des Debian-Systems wegen seiner neuen Funktionen und Pakete. Dies
macht deren System jedoch anfällig für kritische Paketfehler.
Die Installation des apt-listbugs-Pakets schützt Ihr System vor kritischen Fehlern, indem bei Upgrades durch das APT-System automatisch die Debian-Fehlerdatenbank (BTS) bezüglich kritischer Fehler abgefragt wird."""

CACHING = (
    "Debian package management",
    "2.6 Recovery from a broken system",
    "2.6.2 Caching errors of the package data",
)
CACHING_PAGE = """2.6.2 Caching errors of the package data
Caching errors of the package data cause intriguing errors, such as ”GPG error: ... invalid: BADSIG ...” with APT.
You should remove all cached data by ”sudo rm -rf /var/lib/apt/* ” and try again. (If apt-cacher-ng is used,
you should also run ”sudo rm -rf /var/cache/apt-cacher-ng/* ”.)"""

SANE_CONSOLE = ("GNU/Linux tutorials", "1.1 Console basics", "1.1.9 Recovering a sane console")
# The manual asks no such question; manuals that do (FAQ style) are common.
SANE_CONSOLE_QUESTION = (
    "What can you do when your terminal shows garbage after cat printed a binary file?\n"
)
SANE_CONSOLE_PAGE = f"""1.1.9 Recovering a sane console
{SANE_CONSOLE_QUESTION}When the screen goes berserk after doing some funny things such as ”cat some-binary-file”, type ”reset” at the command prompt.
You may not be able to see the command echoed as you type. You may also issue ”clear” to clean up the screen."""


def passage(text, section, *, page=1, start=0, document=1):
    return extractive.Passage(
        text=text,
        section=section,
        document=document,
        page=page,
        start=start,
    )


def test_a_sentence_describing_the_document_is_not_quoted():
    text = extractive.answer(
        "How does systemd start the processes at boot?", [passage(SYSTEMD_PAGE, SYSTEMD)]
    )

    assert "spawns processes in parallel" in text
    assert "This section describes" not in text


def test_a_question_about_the_document_may_be_answered_by_what_it_says_of_itself():
    text = extractive.answer(
        "What does the systemd init section describe?", [passage(SYSTEMD_PAGE, SYSTEMD)]
    )

    assert "This section describes how system is started" in text


def test_a_heading_is_not_glued_to_the_sentence_after_it():
    text = extractive.answer(
        "How are hardware devices represented in the filesystem?",
        [passage(FILESYSTEM_PAGE, FILESYSTEM)],
    )

    assert text.startswith("Following the Unix tradition, the Debian GNU/Linux system")
    assert "1.2.2" not in text


def test_headings_admonitions_and_captions_are_not_units():
    found = units(
        "3.4 The system message\nNote\nTable 3.5: List of typical journalctl command snippets\n"
        "1.2 Unix-like filesystem . . . . . . . . . 35\nThe journal keeps the messages.",
        section=MESSAGES,
    )

    assert [unit.text for unit in found] == ["The journal keeps the messages."]


def test_the_overlap_of_consecutive_chunks_is_quoted_once():
    text = extractive.answer(
        "Do directory entries refer to physical devices in the normal filesystem?",
        [
            passage(FILE_NAMES, FILE_BASICS, page=35, start=2400),
            passage(FILE_BASICS_END, FILE_BASICS, page=35, start=1800),
        ],
    )

    assert text.count("directory entries do exist that refer to physical devices") == 1
    assert "such as ”C:\\”." not in text.replace("device name such as ”C:\\”.", "")


def test_a_chunk_beginning_inside_a_sentence_does_not_quote_that_end():
    found = units(FILE_NAMES, section=FILE_BASICS, starts_mid_text=True)

    assert found[0].text == "such as ”C:\\”."
    assert found[0].fragment
    assert not any(unit.fragment for unit in found[1:])


def test_a_sentence_the_chunk_cuts_off_is_marked_as_cut():
    text = extractive.answer(
        "Can I use any letters or symbols in a file name?",
        [passage(FILE_BASICS_END, FILE_BASICS, page=35, start=1800)],
    )

    assert "While you can use almost any letters or symbols in a file …" in text


def test_a_sentence_starting_with_these_brings_the_one_before():
    text = extractive.answer(
        "Which command accesses the binary log data?",
        [passage(MESSAGES_PAGE, MESSAGES, page=109)],
        limit=1,
    )

    assert text == (
        "Under systemd, both kernel and system messages are logged by the journal service "
        "systemd-journald.service (a.k.a journald) either into a persistent binary data below "
        "”/var/log/journal” or into a volatile binary data below ”/run/log/journal/”. [1] "
        "These binary log data are accessed by the journalctl(1) command. [1]"
    )


def test_a_sentence_ending_in_a_colon_brings_its_command_on_a_line_of_its_own():
    text = extractive.answer(
        "How can I display the log from the last boot?",
        [passage(MESSAGES_PAGE, MESSAGES, page=109)],
        limit=1,
    )

    assert text == ("For example, you can display log from the last boot as: [1]\n$ journalctl -b")


def test_a_german_sentence_starting_with_diese_brings_the_one_before():
    text = extractive.answer(
        "Gehört in /etc/hostname der vollständige Domänenname (FQDN)?",
        [passage(HOSTNAME_PAGE, HOSTNAME, page=115)],
    )

    assert "Diese Datei sollte nur den Rechnernamen des Systems enthalten" in text
    assert "auf den in ”/etc/hostname” festgelegten Wert." in text
    assert "3.2.1" not in text


def test_a_german_sentence_ending_in_a_colon_brings_its_command():
    text = extractive.answer(
        "Wie entpacke ich ein RPM-Archiv?",
        [
            passage(RPM_PAGE, RPM, page=253),
            passage(SAFEGUARDS_PAGE, SAFEGUARDS, page=90),
        ],
        limit=1,
    )

    assert text == (
        "Sie können die Daten aus einem RPM-Archiv auch mit folgendem Befehl extrahieren: [1]\n"
        "$ rpm2cpio file.src.rpm | cpio --extract"
    )


def test_a_manuals_own_question_is_not_quoted_but_the_sentence_after_it_is():
    text = extractive.answer(
        "My terminal shows garbage after I ran cat on a binary file. What can I do?",
        [passage(SANE_CONSOLE_PAGE, SANE_CONSOLE, page=32)],
        limit=1,
    )

    assert text.startswith("When the screen goes berserk")
    assert "type ”reset” at the command prompt" in text
    assert "?" not in text


def test_the_passage_whose_section_title_matches_the_question_is_preferred():
    wired = "You can use nmcli to configure the network of a wired interface."
    radio = "You can use nmcli to configure the network of a radio interface."

    text = extractive.answer(
        "How do I configure the network for Wi-Fi?",
        [
            passage(wired, ("Network setup", "5.1 Ethernet"), document=1),
            passage(radio, ("Network setup", "5.5 Wi-Fi"), document=2),
        ],
        limit=1,
    )

    assert text == f"{radio} [2]"


def test_sentences_of_one_document_come_in_reading_order():
    text = extractive.answer(
        "How are hardware devices and physical devices represented in the filesystem?",
        [
            passage(FILESYSTEM_PAGE, FILESYSTEM, page=35, start=3100),
            passage(FILE_BASICS_END, FILE_BASICS, page=35, start=1800),
        ],
    )

    assert text.index("no special directory path name") < text.index("Following the Unix")


def test_the_best_sentence_brings_the_next_one_of_its_paragraph():
    text = extractive.answer(
        "apt update fails with 'GPG error: ... invalid: BADSIG'. What should I do?",
        [passage(CACHING_PAGE, CACHING, page=92)],
        limit=2,
    )

    assert text == (
        "Caching errors of the package data cause intriguing errors, such as ”GPG error: ... "
        "invalid: BADSIG ...” with APT. [1] You should remove all cached data by ”sudo rm -rf "
        "/var/lib/apt/* ” and try again. [1]"
    )


def test_a_short_answer_is_the_best_sentence_alone():
    text = extractive.answer(
        "apt update fails with 'GPG error: ... invalid: BADSIG'. What should I do?",
        [passage(CACHING_PAGE, CACHING, page=92)],
        limit=1,
    )

    assert text.startswith("Caching errors of the package data")
    assert "You should remove" not in text


MTU_DE = ("Netzwerkkonfiguration", "5.5 Netzwerkoptimierung", "5.5.1 Die optimale MTU finden")
MTU_DE_PAGE = """• Ein größerer MTU-Wert ist grundsätzlich besser, wenn andere Einschränkungen greifen.
Die Maximum Segment Size (MSS) wird als alternative Messmethode für die Paketgröße verwendet. Der Zusammenhang zwischen MSS und MTU ist wie folgt:
• MSS = ”MTU - 40” bei IPv4
• MSS = ”MTU - 60” bei IPv6
Anmerkung
Bei Netzwerkoptimierung mittels iptables(8) (lesen Sie dazu auch Abschnitt 5.6) kann die Paketgröße über
die MSS begrenzt werden; dies ist für einen Router nützlich."""


def test_the_items_a_sentence_introduces_come_on_lines_of_their_own():
    text = extractive.answer(
        "Wie berechne ich bei IPv4 die MSS aus der MTU?",
        [passage(MTU_DE_PAGE, MTU_DE, page=139)],
        limit=1,
    )

    assert text == (
        "Der Zusammenhang zwischen MSS und MTU ist wie folgt: [1]\n"
        "• MSS = ”MTU - 40” bei IPv4\n"
        "• MSS = ”MTU - 60” bei IPv6"
    )


GS = (
    "Datenkonvertierung",
    "11.4 Druckfähige Daten",
    "11.4.2 Zwei PS- oder PDF-Dateien zusammenführen",
)
GS_PAGE = """11.4.2 Zwei PS- oder PDF-Dateien zusammenführen
Sie können zwei PostScript (PS)- oder Portable Document Format (PDF)-Dateien mit dem gs(1)-Befehl von Ghostscript
zusammenführen:
$ gs -q -dNOPAUSE -dBATCH -sDEVICE=pswrite -sOutputFile=bla.ps -f foo1.ps foo2.ps
$ gs -q -dNOPAUSE -dBATCH -sDEVICE=pdfwrite -sOutputFile=bla.pdf -f foo1.pdf foo2.pdf"""


def test_a_sentence_brings_every_command_it_introduces():
    text = extractive.answer(
        "Wie füge ich zwei PDF-Dateien auf der Kommandozeile zu einer zusammen?",
        [passage(GS_PAGE, GS, page=250)],
    )

    assert text == (
        "Sie können zwei PostScript (PS)- oder Portable Document Format (PDF)-Dateien mit dem "
        "gs(1)-Befehl von Ghostscript zusammenführen: [1]\n"
        "$ gs -q -dNOPAUSE -dBATCH -sDEVICE=pswrite -sOutputFile=bla.ps -f foo1.ps foo2.ps\n"
        "$ gs -q -dNOPAUSE -dBATCH -sDEVICE=pdfwrite -sOutputFile=bla.pdf -f foo1.pdf foo2.pdf"
    )


UNATTENDED_DE = (
    "Debian-Paketmanagement",
    "2.7 Tipps für das Paketmanagement",
    "2.7.3 Automatische Upgrades",
)
UNATTENDED_DE_PAGE = """2.7.3 Automatische Upgrades
Das unattended-upgrades-Paket ist hauptsächlich für Sicherheits-Upgrades auf Stable-Systemen gedacht. Sollten Sie ein automatisches
Upgrade in Erwägung ziehen, schließt es Sicherheitslücken. Nutzen Sie dazu folgende Konfigurationsparameter:
APT::Periodic::Update-Package-Lists ”1”;
APT::Periodic::Download-Upgradeable-Packages ”1”;
APT::Periodic::Unattended-Upgrade ”1”;
Wenn Sie ein Unstable-System laufen haben, sollten Sie kein automatisches Upgrade verwenden."""


def test_the_next_sentence_the_best_one_brings_comes_with_the_items_it_introduces():
    text = extractive.answer(
        "Sollte ich auf einem Stable-System ein automatisches Upgrade in Erwägung ziehen?",
        [passage(UNATTENDED_DE_PAGE, UNATTENDED_DE, page=106)],
        limit=2,
    )

    assert text == (
        "Sollten Sie ein automatisches Upgrade in Erwägung ziehen, schließt es "
        "Sicherheitslücken. [1] Nutzen Sie dazu folgende Konfigurationsparameter: [1]\n"
        "APT::Periodic::Update-Package-Lists ”1”;\n"
        "APT::Periodic::Download-Upgradeable-Packages ”1”;\n"
        "APT::Periodic::Unattended-Upgrade ”1”;"
    )


def test_a_sentence_announcing_what_the_passage_cut_off_is_not_brought_along():
    cut = """2.7.3 Automatische Upgrades
Das unattended-upgrades-Paket ist hauptsächlich für Sicherheits-Upgrades auf Stable-Systemen gedacht.
Nutzen Sie für automatische Upgrades folgende Konfigurationsparameter:"""

    text = extractive.answer(
        "Wofür ist das unattended-upgrades-Paket hauptsächlich gedacht?",
        [passage(cut, UNATTENDED_DE, page=106)],
        limit=2,
    )

    assert text == (
        "Das unattended-upgrades-Paket ist hauptsächlich für Sicherheits-Upgrades auf "
        "Stable-Systemen gedacht. [1]"
    )


def test_a_sentence_ending_in_a_colon_chosen_for_its_own_words_is_quoted():
    cut = """The complete genome of the SAIBK strain is 27,534 nucleotides (nt) in length, including the poly(A) tail.
It has a classical IBV genome organization with 10 open reading frames (ORFs):"""

    text = extractive.answer(
        "How many open reading frames are in the SAIBK gene?",
        [passage(cut, (), page=1)],
    )

    assert "with 10 open reading frames (ORFs): [1]" in text


DEBUG_BUILD_DE = ("Programmierung", "12.5 Debugging", "12.5.3 Debug-Pakete erzeugen")
DEBUG_BUILD_DE_PAGE = """Kompilieren und installieren Sie ein Paket mit Debugging-Symbolen wie folgt:
$ export DEB_BUILD_OPTIONS=”nostrip noopt”
$ debuild
$ cd ..
$ sudo debi package_name*.changes"""
# Another page of the same manual, naming the same commands in its prose.
DEBUILD_DE_PAGE = (
    """Das Werkzeug debuild ruft dpkg-buildpackage auf, und cd .. führt danach zurück."""
)


def test_a_command_another_page_also_names_stays_in_its_list():
    text = extractive.answer(
        "Wie kompiliere ich ein Paket mit Debugging-Symbolen?",
        [
            passage(DEBUILD_DE_PAGE, DEBUG_BUILD_DE, page=266),
            passage(DEBUG_BUILD_DE_PAGE, DEBUG_BUILD_DE, page=268),
        ],
        limit=1,
    )

    assert text.endswith(
        "wie folgt: [2]\n$ export DEB_BUILD_OPTIONS=”nostrip noopt”\n$ debuild\n$ cd ..\n"
        "$ sudo debi package_name*.changes"
    )


PAM = (
    "System initialization",
    "4.5 PAM and NSS",
    "4.5.1 Configuration files accessed by PAM and NSS",
)
# A table the page ran together: its header, then rows joined into one line.
PAM_PAGE = """The notable packages of PAM and NSS systems are the following.
package popcon size description
libpam-modules V:883, I:999 1030 Pluggable Authentication Modules (basic service) libpam-ldap V:1, I:10 241 Pluggable Authentication Module allowing LDAP interfaces libpam-cracklib V:1, I:13 117 Pluggable Authentication Module to enable cracklib support libpam-systemd V:477, I:910 530 Pluggable Authentication Module to register user sessions for logind"""


def test_rows_run_together_are_not_listed_under_their_lead_in():
    text = extractive.answer(
        "Which packages provide PAM and NSS?", [passage(PAM_PAGE, PAM, page=117)], limit=1
    )

    assert text.startswith("The notable packages of PAM and NSS systems are the following. [1]")
    assert "libpam-cracklib" not in text


PACKAGE_FILES = ("Debian package management", "2.5 Advanced package management", "2.5.9 Searching")
PACKAGE_FILES_PAGE = """• Don’t mess with the package management system.
The ”dpkg -S file_name_pattern” can be used to search package names which contain files with the matching name
installed by dpkg."""


def test_a_plural_meets_its_singular_in_the_question():
    text = extractive.answer(
        "Which package does a file belong to?",
        [passage(PACKAGE_FILES_PAGE, PACKAGE_FILES, page=86)],
        limit=1,
    )

    assert text.startswith("The ”dpkg -S file_name_pattern” can be used to search package names")


CONSOLES = ("GNU/Linux tutorials", "1.1 Console basics", "1.1.6 Virtual consoles")
CONSOLES_PAGE = """• Switching to the character console.
Press Ctrl-Alt-F3 to switch to the character console 3 from the GUI."""


def test_a_unit_that_only_restates_the_question_loses_to_one_that_answers_it():
    text = extractive.answer(
        "Which keys switch to the character console?",
        [passage(CONSOLES_PAGE, CONSOLES, page=31)],
        limit=1,
    )

    assert text == "Press Ctrl-Alt-F3 to switch to the character console 3 from the GUI. [1]"


WAYLAND = ("The X Window System", "7.2 GUI communication protocols")
WAYLAND_PAGE = """GUI communication protocol used on the GNOME desktop can be:
• Wayland (display server protocol) (native)
• X Window System core protocol (via xwayland)
See Section 7.7
If the mouse cursor is on an application which uses Wayland, xeyes don’t move with the cursor."""


def test_a_pointer_elsewhere_is_no_item_of_the_list_before_it():
    text = extractive.answer(
        "Which protocols does the GNOME desktop use?",
        [passage(WAYLAND_PAGE, WAYLAND, page=148)],
        limit=1,
    )

    assert text == (
        "GUI communication protocol used on the GNOME desktop can be: [1]\n"
        "• Wayland (display server protocol) (native)\n"
        "• X Window System core protocol (via xwayland)"
    )


VIRTUAL_CONSOLES = ("GNU/Linux tutorials", "1.1 Console basics", "1.1.6 Virtual consoles")
VIRTUAL_CONSOLES_PAGE = """1.1.6 Virtual consoles
A terminal on the virtual console 2 shows the GUI again: get back to it by pressing Alt-F2."""


def test_a_sentence_of_the_page_before_from_another_section_comes_after_the_best_one():
    text = extractive.answer(
        "My terminal shows garbage after I ran cat on a binary file. How do I get it back to normal?",
        [
            passage(SANE_CONSOLE_PAGE.replace(SANE_CONSOLE_QUESTION, ""), SANE_CONSOLE, page=32),
            passage(VIRTUAL_CONSOLES_PAGE, VIRTUAL_CONSOLES, page=31),
        ],
    )

    assert text.startswith("When the screen goes berserk")
    assert text.endswith("by pressing Alt-F2. [2]")


GIT_REFERENCES = ("Data management", "10.5 Git", "10.5.4 Git references")
# A table whose rows the page ran together into one line, with no sentence to end at.
GIT_REFERENCES_PAGE = """Git command line function
gitk --all see complete Git history and operate on them such as resetting HEAD to another commit, cheery-picking patches, creating tags and branches clean -x -d -f revert all working tree changes and clean them up completely git rm --cached filename revert staged index changed by git add filename git reflog get reference log (useful for recovering commits from the removed branch) git branch new_branch_name HEAD@{6} create a new branch from reflog information git remote add new_remote URL add a new_remote remote repository pointed by URL
Table 10.21: List of Git tips"""


def test_of_rows_run_together_the_stretch_around_the_questions_words_is_shown():
    text = extractive.answer(
        "Which git command helps me recover commits from a removed branch?",
        [passage(GIT_REFERENCES_PAGE, GIT_REFERENCES, page=225)],
        limit=1,
    )

    assert "git reflog get reference log (useful for recovering commits from the removed" in text
    assert text.startswith("… ") and text.endswith(" … [1]")
    assert len(text) <= MAX_ITEM_CHARS + len("… ") + len(" … [1]")


def test_a_tables_header_row_is_not_quoted_on_its_own():
    header = next(unit for unit in units(ACTIVITY_LOGS) if unit.text == "file content")
    assert header.label

    text = extractive.answer(
        "Which file holds the content of the package log?",
        [extractive.Passage(ACTIVITY_LOGS, section=ACTIVITY_LOGS_SECTION)],
    )

    assert "file content" not in text
    assert "/var/log/dpkg.log" in text
