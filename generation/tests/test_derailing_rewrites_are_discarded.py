"""A rewrite that would lead the search astray is discarded, logged, and the question is
searched as asked."""

import logging

import pytest

from generation.rewrite import derailed, rewrite_query

TURNS = [
    ("user", "Which mailing list announces new Debian packages?"),
    (
        "assistant",
        "New packages are announced on debian-devel-announce by the Debian Packages Group "
        "<packages@lists.debian.org> [1].",
    ),
]
QUESTION = "And how do I subscribe to it?"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        # What a 1.5B model really answered: the previous answer's e-mail address.
        ("Debian Packages Group <packages@lists.debian.org>", "an address or identifier"),
        ("https://lists.debian.org/debian-devel-announce/", "an address or identifier"),
        ("subscribe", "much shorter than a question"),
        (" ".join(["subscribe to the list and read every announcement"] * 6), "much longer"),
        ("list 0x3f2a 9e:11:4b 7781-2233 4f:7c key", "looks like an identifier"),
        ("Best pancake recipe with blueberries", "shares no content word"),
    ],
)
def test_a_derailing_rewrite_falls_back_to_the_question_and_is_logged(
    fake_openai, db, caplog, reply, reason
):
    fake_openai.chat_replies.append(reply)

    with caplog.at_level(logging.WARNING, logger="generation.rewrite"):
        rewrite = rewrite_query(question=QUESTION, turns=TURNS, user=None)

    assert rewrite.query == QUESTION
    assert reason in rewrite.failure
    assert "searching the question as asked" in caplog.text
    assert reply[:40] in caplog.text


def test_a_rewrite_that_resolves_the_reference_is_kept(fake_openai, db):
    fake_openai.chat_replies.append("How do I subscribe to the debian-devel-announce list?")

    rewrite = rewrite_query(question=QUESTION, turns=TURNS, user=None)

    assert rewrite.query == "How do I subscribe to the debian-devel-announce list?"
    assert rewrite.failure is None


def test_an_address_the_question_itself_contains_may_stay():
    question = "Is packages@lists.debian.org the right address for it?"

    assert derailed("Is packages@lists.debian.org the right address for Debian packages?",
                    question=question, turns=TURNS) is None  # fmt: skip


def test_a_german_rewrite_is_measured_in_german_words():
    turns = [("user", "Wie installiere ich Pakete mit apt?"), ("assistant", "Mit apt install [1].")]

    assert derailed("Wie entferne ich Pakete mit apt wieder?", question="Und entfernen?",
                    turns=turns) is None  # fmt: skip
