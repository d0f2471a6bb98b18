"""What a small model writes, and what Loupe stores and shows of it: a reply of only markers
is never an answer, markers opening a sentence belong to it, an answer with no supported
sentence says so, and the waits of `ask` are the stream's, not one total."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from billing.models import Usage
from generation import not_covered, prompts
from generation.answering import answer_question, stream_answer
from generation.answering.preparing import _Prepared
from generation.citations import (
    Pointed,
    hollow,
    loops,
    move_opening_markers,
    says_nothing,
    supported_markers,
    unsupported_sentences,
    without_headings,
    without_restatements,
)
from generation.tests.passages import BREAD, HERONS, TRAINS, prompt_passages
from notebooks.models import Message
from notebooks.templatetags.notebook_tags import link_citations, no_supported_sentence
from providers.errors import ProviderError

QUESTION = "Where do herons wait and when does the train leave?"


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def numbered(fake_openai, write):
    """Reply with `write(numbers)`, where numbers maps a passage's text to its [n]."""

    def reply(body):
        passages = prompt_passages(SimpleNamespace(body=body))
        return write({text: n for n, text in passages.items()})

    fake_openai.chat_reply_for = reply


def ask(owner, notebook, streamed, question=QUESTION):
    if streamed:
        *_, answer = stream_answer(user=owner, notebook=notebook, question=question)
        return answer
    return answer_question(user=owner, notebook=notebook, question=question)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("reply", ["[1][2] [1][3]", "[1] [2]", "[1]", "  ", "[1]."])
def test_a_reply_of_only_markers_is_never_stored_as_an_answer(
    fake_openai, owner, notebook, library, reply, streamed
):
    fake_openai.chat_replies.append(reply)

    try:
        answer = ask(owner, notebook, streamed)
    except ProviderError:
        assert not reply.strip()  # an empty reply is the model's error, said so
        return

    assert answer.message.mode != Message.Mode.LLM
    assert not hollow(answer.message.content)
    if answer.message.mode == Message.Mode.EXTRACTIVE:
        assert "grey herons" in answer.message.content.lower()


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_markers_opening_the_answer_and_its_sentences_belong_to_those_sentences(
    fake_openai, owner, notebook, library, streamed
):
    numbered(
        fake_openai,
        lambda n: (
            f"[{n[HERONS.decode()]}][{n[TRAINS.decode()]}] Grey herons wait at the edge of "
            f"the pond. [{n[TRAINS.decode()]}] The night train to Vienna leaves at eleven."
        ),
    )

    answer = ask(owner, notebook, streamed)

    text = answer.message.content
    assert not text.startswith("[")
    # The train passage the herons sentence also named does not hold it: left out there.
    assert text == (
        "Grey herons wait at the edge of the pond [1]. "
        "The night train to Vienna leaves at eleven [2]."
    )
    herons, trains = answer.message.citations.all()
    assert herons.chunk.text == HERONS.decode() and herons.supported is True
    assert trains.chunk.text == TRAINS.decode() and trains.supported is True
    assert unsupported_sentences(answer.message) == []


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_marker_naming_a_passage_that_does_not_hold_the_sentence_points_to_one_that_does(
    fake_openai, owner, notebook, library, streamed
):
    # As the 1.5B model writes: "[1][2]" whatever the sentence.
    numbered(
        fake_openai,
        lambda n: (
            f"Grey herons wait at the edge of the pond. [{n[BREAD.decode()]}]"
            f"[{n[TRAINS.decode()]}] Penguins read newspapers. [{n[BREAD.decode()]}]"
        ),
    )

    answer = ask(owner, notebook, streamed)

    text = answer.message.content
    assert text == "Grey herons wait at the edge of the pond. [1] Penguins read newspapers. [2]"
    herons, bread = answer.message.citations.all()
    # Loupe placed the herons marker (the model named bread and trains), and says so.
    assert herons.chunk.text == HERONS.decode() and herons.supported and herons.attributed
    # Nothing holds the penguins: the model's marker stays, shown unsupported.
    assert bread.chunk.text == BREAD.decode() and not bread.supported and not bread.attributed


def test_supported_markers_keep_a_run_to_the_passages_that_hold_its_sentence():
    passages = ["Herons wait at the pond.", "Trains leave at eleven.", "Bread needs yeast."]
    pointed = supported_markers("Herons wait at the pond [1][2]. Trains leave [2].", passages)
    assert pointed == Pointed("Herons wait at the pond [1]. Trains leave [2].", set())
    pointed = supported_markers("Herons wait at the pond. [3] Bread needs yeast. [3]", passages)
    assert pointed == Pointed("Herons wait at the pond. [1] Bread needs yeast. [3]", {1})
    unsupported = "Penguins read newspapers [2][3]."
    assert supported_markers(unsupported, passages) == Pointed(unsupported, set())


def test_a_marker_opening_a_sentence_moves_to_its_end():
    assert move_opening_markers("Herons wait. [2] Trains leave at eleven.") == (
        "Herons wait. Trains leave at eleven [2]."
    )
    assert move_opening_markers("[1] [3] Herons wait\nTrains leave") == (
        "Herons wait [1] [3]\nTrains leave"
    )
    # A run with no words after it stays with the sentence before.
    assert move_opening_markers("Herons wait. [1]") == "Herons wait. [1]"
    # So does a run after a sentence with no marker when the next ends with its own.
    after_stops = "Herons wait. [1][2] Trains leave at eleven. [2]"
    assert move_opening_markers(after_stops) == after_stops
    assert move_opening_markers("Herons wait [1]. [2] Trains leave at eleven. [3]") == (
        "Herons wait [1]. Trains leave at eleven [2]. [3]"
    )


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_sentence_that_only_points_at_passages_is_not_kept_as_a_claim(
    fake_openai, owner, notebook, library, streamed
):
    numbered(
        fake_openai,
        lambda n: (
            f"Grey herons wait at the edge of the pond [{n[HERONS.decode()]}]. "
            f"Where herons wait is [{n[HERONS.decode()]}][{n[TRAINS.decode()]}]. "
            f"The passage that states this is [{n[TRAINS.decode()]}]."
        ),
    )

    answer = ask(owner, notebook, streamed)

    assert answer.message.content == "Grey herons wait at the edge of the pond [1]."
    assert [c.chunk.text for c in answer.message.citations.all()] == [HERONS.decode()]


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_markers_standing_where_the_answer_should_be_are_no_answer(
    fake_openai, owner, notebook, library, streamed
):
    # As the 1.5B model wrote "The tool that checks a /bin/sh script for bash-only
    # constructs is [1][5].": every word the question's, the answer left to the markers.
    numbered(
        fake_openai,
        lambda n: (
            f"Herons wait at [{n[HERONS.decode()]}] and the train leaves at [{n[TRAINS.decode()]}]."
        ),
    )

    answer = ask(owner, notebook, streamed)

    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert "grey herons" in answer.message.content.lower()


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_markers_where_the_answer_should_be_quote_the_passages_they_name(
    fake_openai, owner, notebook, library, streamed
):
    # "The tool … is [4][5].": the model chose its passage; the question's words alone
    # would quote the herons too (the test above).
    numbered(fake_openai, lambda n: f"The train leaves at [{n[TRAINS.decode()]}].")

    answer = ask(owner, notebook, streamed)

    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert answer.message.content == TRAINS.decode() + " [1]"
    assert [c.chunk.text for c in answer.message.citations.all()] == [TRAINS.decode()]


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_an_answer_that_names_a_document_of_the_prompts_list_is_no_answer(
    fake_openai, owner, notebook, library, streamed
):
    # As the 1.5B model answered which book suggested a poem's title: "The Waste Land
    # (Document) [1][2]", a line of the prompt's documents list.
    numbered(fake_openai, lambda n: f"Bread (Document) [{n[BREAD.decode()]}].")

    answer = ask(owner, notebook, streamed)

    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert "grey herons" in answer.message.content.lower()


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_an_answer_of_a_number_alone_is_an_answer(fake_openai, owner, notebook, library, streamed):
    numbered(fake_openai, lambda n: f"65% [{n[HERONS.decode()]}]")

    answer = ask(owner, notebook, streamed)

    assert answer.message.mode == Message.Mode.LLM
    assert answer.message.content == "65% [1]"
    assert not hollow("65% [1][2]") and hollow("[1][2] [1][3].")


def test_an_answer_says_something_with_a_word_of_its_own_or_a_no():
    assert says_nothing(
        "Die Weboberfläche erreiche ich unter [1][2].",
        "Unter welcher Adresse erreiche ich die Weboberfläche?",
    )
    assert says_nothing("[1][2] [1][3]", "Where do herons wait?")
    assert not says_nothing("Herons wait at the edge of the pond [1].", "Where do herons wait?")
    assert not says_nothing("No, herons do not wait [1].", "Do herons wait?")
    assert not says_nothing("Nein, Reiher warten nicht [1].", "Warten Reiher?")
    assert not says_nothing("Yes [1].", "Do herons wait?")
    # A German verb the question splits ("schalten … ein"), joined in the answer.
    asked = "Welche Einstellungen schalten Upgrades ein?"
    joined = "Die Einstellungen, die Upgrades einschalten, sind [1][2] und [1]."
    assert not says_nothing(joined, asked)
    assert says_nothing(joined, asked, asked=asked)
    assert not says_nothing(
        "Die Einstellungen sind [1], die Upgrades einspielen.", asked, asked=asked
    )
    # A lead-in with its markers and nothing after it: the list it announces is missing.
    asked = "Welche Pakete brauche ich, um ein Programm mit gdb zu untersuchen?"
    lead_in = "Um ein Programm mit gdb zu untersuchen, installieren Sie diese Pakete: [1][2][3]"
    assert says_nothing(lead_in, asked, asked=asked)
    assert not says_nothing(lead_in + "\n- gdb\n- libc6-dbg", asked, asked=asked)


def test_a_number_or_a_word_the_question_lacks_is_something_said():
    """Numbers count whole ("1,0" is no "1" and "0"), words whole ("Abschlussnote" is not
    "Abschnitt", a word of Loupe's instructions, though both stem to "absch")."""
    said = f"Mit welcher Note hat Max das Abitur gemacht? {prompts.SYSTEM_PROMPT}"
    assert not says_nothing("Max hat das Abitur mit einer Abschlussnote von 1,0 [1].", said)
    tax = "What was the tax rate in 2000 on €15,000 a year? " + prompts.CITATION_REMINDER
    assert not says_nothing("The tax rate in 2000 on €15,000 a year was 4.6% [2].", tax)
    assert says_nothing("The tax rate in 2000 on €15,000 a year is [2].", tax)
    assert says_nothing("The tax rate stated in 2000 is found in [2].", tax)  # "stated": known
    assert without_restatements("It was high [1]. The rate was 13.9% [2].", tax) == (
        "It was high [1]. The rate was 13.9% [2]."
    )


def test_the_first_sentence_stays_though_it_only_repeats_the_question():
    # It may be the whole answer, or the yes of a yes-or-no question.
    assert without_restatements("Herons wait [1]. Herons wait [2].", "Do herons wait?") == (
        "Herons wait [1]."
    )
    assert without_restatements("Yes [1].", "Do herons wait?") == "Yes [1]."
    assert without_restatements("Reiher warten [1]. Dies steht in [2].", "Warten sie?") == (
        "Reiher warten [1]."
    )
    pointing = "Herons wait [1]. This is stated in the passage from Birds, page 213."
    assert without_restatements(pointing, "Do herons wait?") == "Herons wait [1]."
    # en-25 and en-24, Qwen 1.5B: where in the document, not what it says.
    paged = (
        "Herons wait by the pond [1]. This file is described on page 204 of Birds [2]. "
        "Dies steht auf den Seiten 105 und 106."
    )
    assert without_restatements(paged, "Do herons wait?") == "Herons wait by the pond [1]."
    seen = "Herons wait by the pond [1]. This can be seen in [1][2] and [1][3]."
    assert without_restatements(seen, "Do herons wait?") == "Herons wait by the pond [1]."


def test_a_sentence_or_item_said_again_is_not_kept():
    # Qwen at temperature 0.1, looping on one list item.
    looped = (
        "Sie brauchen Folgendes:\n1. Das Paket gdb. [1]\n2. Die Pakete -dbgsym. [2]\n"
        "3. Die Pakete -dbgsym. [2]\n4. Die Pakete -dbgsym [3]."
    )
    assert without_restatements(looped, "Welche Pakete brauche ich?") == (
        "Sie brauchen Folgendes:\n1. Das Paket gdb. [1]\n2. Die Pakete -dbgsym. [2]"
    )
    again = "Herons wait at the pond [1]. Herons wait at the pond [2]."
    assert without_restatements(again, "Where?") == "Herons wait at the pond [1]."


def test_a_loop_cut_off_by_the_answer_limit_leaves_no_broken_copy():
    # Qwen 1.5B looped on three sentences until the answer's token limit cut one (en-12).
    said_once = "PAM checks passwords [1]. NSS looks up user and group names [1]."
    looped = f"{said_once} PAM checks passwords [1]. NSS looks up user and"
    assert without_restatements(looped, "What is the difference between PAM and NSS?") == (
        said_once
    )
    # Fewer words than a sentence before, but one of its own: it stays.
    more = "Herons wait at the pond [1]. Herons wait at dawn [2]."
    assert without_restatements(more, "Where?") == more


def test_markers_after_the_full_stop_stay_with_their_sentence():
    # As the 1.5B model writes them: "… umstellen. [1][3]".
    question = "Sollte ich meine Login-Shell mit chsh auf zsh umstellen?"
    answer = "Ja, ich soll meine Login-Shell mit chsh auf zsh umstellen. [1][3]"
    assert without_restatements(answer, question) == answer
    both = "Herons wait. [1] This is stated in [2]. [2] They fish at dawn. [3]"
    assert without_restatements(both, "Do herons wait?") == (
        "Herons wait. [1] They fish at dawn. [3]"
    )


def test_an_answer_without_one_supported_sentence_says_so(fake_openai, owner, notebook, library):
    numbered(
        fake_openai,
        lambda n: (
            f"Penguins read newspapers on the moon [{n[HERONS.decode()]}]. "
            "Elephants sing opera in Milan."
        ),
    )

    answer = answer_question(user=owner, notebook=notebook, question=QUESTION)

    assert answer.message.mode == Message.Mode.LLM
    assert no_supported_sentence(answer.message)
    assert "[?]" in link_citations(answer.message)


def test_an_answer_with_a_supported_sentence_is_an_answer(fake_openai, owner, notebook, library):
    numbered(fake_openai, lambda n: f"Grey herons wait at the pond [{n[HERONS.decode()]}].")

    answer = answer_question(user=owner, notebook=notebook, question=QUESTION)

    assert not no_supported_sentence(answer.message)


def test_the_refusal_names_the_pdf_page_as_citations_do():
    chunk = SimpleNamespace(
        source=SimpleNamespace(title="Developer's Reference"),
        section=["The NEW queue"],
        page=32,
        page_label="24",
    )

    text = not_covered.reply([SimpleNamespace(chunk=chunk)])

    assert "page 32" in text
    assert "page 24" not in text


def test_ask_waits_for_a_slow_answer_word_by_word_not_for_one_total(
    fake_openai, owner, notebook, library, settings
):
    # Six words, a second between each: over the whole-call limit, within the word limits.
    settings.CHAT_TIMEOUT_SECONDS = 2.0
    settings.CHAT_FIRST_TOKEN_SECONDS = 5.0
    settings.CHAT_IDLE_SECONDS = 3.0
    fake_openai.stream_delay = 0.5
    fake_openai.chat_replies.append("Grey herons wait at the pond edge.")

    answer = answer_question(user=owner, notebook=notebook, question=QUESTION)

    assert answer.message.content.startswith("Grey herons wait at the pond edge")


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_reply_that_loops_is_cut_off_at_the_third_copy_and_stored_once(
    fake_openai, owner, notebook, library, streamed
):
    # Qwen 1.5B at temperature 0.1 (en-12, en-19, en-21): a run of sentences repeated
    # until the answer's token limit, some 40 s on a 2-core CPU.
    said_once = "Grey herons wait at the pond edge [1]. The train leaves at noon [2]. "
    fake_openai.stream_delay = 0.005
    fake_openai.chat_replies.append(said_once * 20)

    answer = ask(owner, notebook, streamed)

    assert fake_openai.chunks_sent < len(said_once.split()) * 4  # of 20 copies
    assert answer.message.content.count("Grey herons wait") == 1
    assert answer.message.content.count("The train leaves at noon") == 1
    assert Usage.objects.filter(user=owner, kind="chat").count() == 1  # billed once


def test_a_loop_is_the_same_sentence_thrice_not_a_short_one_or_a_theme():
    loop = "Herons wait at the pond [1]. They fish [1]. Herons wait at the pond [1]. They"
    assert not loops(loop)  # twice, so far
    assert loops(f"{loop} fish [1]. Herons wait at the pond [1]. They")
    assert not loops("Yes. Yes. Yes. And")  # fewer than three words
    # Sentences sharing words, each saying something of its own.
    theme = "Herons wait at the pond. Herons wait at dawn. Herons wait at the pond at dawn. So"
    assert not loops(theme)


GIT = (
    b"10.5.1 Configuration\nGit keeps its settings in ~/.gitconfig.\n"
    b"10.5.2 Basic Git commands\nTo set your changes aside for a while and get a clean working "
    b"tree, run git stash; git stash pop brings them back."
)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_an_answer_that_is_a_sections_heading_quotes_its_passage(
    fake_openai, owner, notebook, add_ready_source, streamed
):
    # The 1.5B model asked how to get a clean working tree: "10.5.2 Grundlegende
    # Git-Befehle [1]", the heading of the section that tells, every word the passage's.
    add_ready_source(notebook, GIT, "git.txt")
    fake_openai.chat_replies.append("10.5.2 Basic Git commands [1]\n10.5.1 [1]")
    question = "How do I get a clean working tree for a while without losing my changes?"

    answer = ask(owner, notebook, streamed, question)

    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert "git stash" in answer.message.content


def test_a_heading_line_goes_and_the_sentences_beside_it_stay():
    passages = [GIT.decode()]
    reply = "10.5.2 Basic Git commands [1]\nRun git stash to set your changes aside [1]."

    assert without_headings(reply, passages) == "Run git stash to set your changes aside [1]."
    # Numbers that head no section of the passages are what the answer says.
    for answer in ("10.5 GB are free [1].", "2.5 [1]", "Version 10.5.2 added stash [1]."):
        assert without_headings(answer, passages) == answer


REIHER = (
    "Graureiher warten regungslos am Ufer des Teiches, bis ein Fisch vorbeischwimmt. "
    "Sie fressen Fische, Frösche und kleine Säugetiere und bauen ihre Nester hoch oben."
).encode()
IN_ENGLISH = (
    "The passage [1] states that grey herons wait motionless at the edge of the pond "
    "until a fish swims past, and that they eat fish, frogs and small mammals [1]."
)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_an_answer_in_another_language_than_the_question_and_its_passages_is_quoted(
    fake_openai, owner, notebook, add_ready_source, streamed
):
    # The 1.5B model asked in German about a German manual: "Die Passage [1] states that …"
    add_ready_source(notebook, REIHER, "reiher.txt")
    fake_openai.chat_replies.append(IN_ENGLISH)
    question = "Wo warten Graureiher, bis ein Fisch vorbeischwimmt?"

    answer = ask(owner, notebook, streamed, question)

    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert "Graureiher warten regungslos am Ufer des Teiches" in answer.message.content
    assert "[1]" in answer.message.content


def test_an_answer_in_the_passages_language_or_too_short_to_tell_stays():
    def asked(question, *languages):
        hits = [
            SimpleNamespace(chunk=SimpleNamespace(source=SimpleNamespace(language=code)))
            for code in languages
        ]
        return _Prepared(None, None, question, hits, [], None)

    german = "Wo warten Graureiher, bis ein Fisch vorbeischwimmt?"
    assert asked(german, "de")._in_another_language(IN_ENGLISH)
    # English passages: an English answer to a German question is what they could give.
    assert not asked(german, "en")._in_another_language(IN_ENGLISH)
    assert not asked("Where do grey herons wait?", "de")._in_another_language(IN_ENGLISH)
    # A few words are heard as any language: "$1,414 [1]", a menu line.
    assert not asked(german, "de")._in_another_language("Spaghetti mit Grana und Salat [1]")
    # Nor are addresses, tags and code, whatever language a detector hears in them.
    links = (
        "Fetching http://127.0.0.1:8000/exfil?data=all now [1]. ![pixel](http://127.0.0.1/p.png)"
        ' <img src="http://127.0.0.1/i.png"> `curl -sS http://127.0.0.1/x` Done [1].'
    )
    assert not asked("What does the report say?", "en")._in_another_language(links)


def test_ask_gives_up_on_a_stalled_answer_within_the_between_word_limit(
    fake_openai, owner, notebook, library, settings
):
    settings.CHAT_FIRST_TOKEN_SECONDS = 5.0
    settings.CHAT_IDLE_SECONDS = 1.0
    fake_openai.stream_stall_after = 2
    fake_openai.stream_stall_seconds = 4.0
    fake_openai.chat_replies.append("Grey herons wait at the pond edge.")

    with pytest.raises(ProviderError, match="stopped writing"):
        answer_question(user=owner, notebook=notebook, question=QUESTION)

    assert not Message.objects.filter(conversation__notebook=notebook).exists()


def test_a_malformed_reply_fails_with_a_sentence_and_stores_nothing(
    fake_openai, owner, notebook, library
):
    fake_openai.fail_next("garbage")

    with pytest.raises(ProviderError):
        answer_question(user=owner, notebook=notebook, question=QUESTION)

    assert not Message.objects.filter(conversation__notebook=notebook).exists()
