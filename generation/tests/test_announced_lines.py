"""A small model copies the sentence of its passage that announces a command ("… as the
following.") and stops: what it announces is given after it, verbatim from the passage, as
the extractive answerer brings it along: a list as a list, a transcript or a setting as code."""

from __future__ import annotations

import pytest

from generation.answering import answer_question, stream_answer
from generation.citations import announced_lines, with_announced_lines

MIRROR = (
    "4.2.1 Limiting the mirror's bandwidth\n"
    "If you want to limit the bandwidth the mirror tool uses to e.g. 100kiB/sec, you should set\n"
    "its configuration parameter as the following.\n"
    'Mirror::Http::Rate-Limit "800";\n'
    "4.2.2 Mirrors behind a proxy\n"
    "A mirror behind a proxy reads the proxy from its environment."
)
RECORDING = (
    "Aufgezeichnete Sitzungen enthalten Steuerzeichen. Sie können dies mit dem Filter wie folgt\n"
    "bereinigen:\n"
    "$ record\n"
    "Recording started, file is session\n"
    "Arbeiten Sie wie gewohnt und beenden Sie die Aufzeichnung mit Strg-D am Ende.\n"
    "$ filter -b < session > clean\n"
    "Es gibt andere Wege, eine Sitzung aufzuzeichnen:\n"
    "$ other-recorder"
)


def test_the_setting_a_sentence_announces_follows_it_up_to_the_next_section():
    answer = "To cap the mirror's bandwidth, set its configuration parameter as the following. [1]"

    assert with_announced_lines(answer, [MIRROR]) == (
        f'{answer}\n\n```\nMirror::Http::Rate-Limit "800";\n```'
    )


def test_a_transcript_keeps_its_lines_between_commands_up_to_the_next_announcement():
    answer = "Sie können die Sitzung mit dem Filter wie folgt bereinigen: [1]"

    assert announced_lines(answer, RECORDING) == (
        "```\n$ record\nRecording started, file is session\n"
        "Arbeiten Sie wie gewohnt und beenden Sie die Aufzeichnung mit Strg-D am Ende.\n"
        "$ filter -b < session > clean\n```"
    )
    assert "$ filter -b < session > clean\n```" in with_announced_lines(answer, [RECORDING])
    assert "other-recorder" not in with_announced_lines(answer, [RECORDING])


@pytest.mark.parametrize(
    "answer",
    [
        # The answer goes on with the setting itself.
        'Set its parameter as the following. [1]\n```\nMirror::Http::Rate-Limit "8";\n```',
        # It announces nothing.
        "The mirror tool's bandwidth can be limited to about 100kiB/sec [1].",
        # The passage it names does not hold the announcing sentence.
        "To cap the mirror's bandwidth, set its configuration parameter as the following. [2]",
    ],
)
def test_an_answer_that_gives_or_announces_nothing_or_cites_elsewhere_stays_as_written(answer):
    assert with_announced_lines(answer, [MIRROR, RECORDING]) == answer


def test_prose_after_an_announcement_is_no_command_to_give():
    passage = (
        "The tool keeps a log, as the following.\n"
        "Every run writes a line with its date and the number of files it copied\n"
        "to the log, which grows until it is rotated by the system each week."
    )
    answer = "The tool keeps a log, as the following. [1]"

    assert with_announced_lines(answer, [passage]) == answer


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_an_answer_that_stops_at_the_announcement_shows_the_setting_cited(
    fake_openai, owner, notebook, add_ready_source, streamed
):
    add_ready_source(notebook, MIRROR.encode(), "mirror.txt")
    fake_openai.chat_replies.append(
        "To cap the mirror's bandwidth, set its configuration parameter as the following. [1]"
    )
    question = "How can I cap the mirror tool's bandwidth?"

    if streamed:
        *_, answer = stream_answer(user=owner, notebook=notebook, question=question)
    else:
        answer = answer_question(user=owner, notebook=notebook, question=question)

    text = answer.message.content
    assert text.endswith('[1]\n\n```\nMirror::Http::Rate-Limit "800";\n```')
    (citation,) = answer.message.citations.all()
    assert citation.supported


def test_a_list_announced_comes_as_a_list():
    passage = (
        "To debug a program you need the following packages:\n"
        "• gdb, the debugger\n"
        "• the program's -dbgsym package\n"
        "3.1 Other tools\n"
        "• strace"
    )

    assert announced_lines("You need the following packages:", passage) == (
        "- gdb, the debugger\n- the program's -dbgsym package"
    )
