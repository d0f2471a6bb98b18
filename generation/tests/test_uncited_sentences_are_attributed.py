import json
from io import StringIO

import pytest
from django.core.management import call_command

from generation.answering import answer_question, stream_answer
from generation.citations import attribute_sentences, unsupported_sentences
from generation.tests.passages import BREAD, HERONS, TRAINS
from notebooks.templatetags.notebook_tags import link_citations

# A small model's reply: right sentences, no marker at all.
MARKERLESS = (
    "Grey herons wait at the edge of the pond. "
    "The night train to Vienna leaves the central station at eleven. "
    "Penguins read newspapers on the moon."
)


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def ask(owner, notebook, streamed: bool):
    question = "Where do herons wait and when does the train leave?"
    if streamed:
        *_, answer = stream_answer(user=owner, notebook=notebook, question=question)
        return answer
    return answer_question(user=owner, notebook=notebook, question=question)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_sentences_without_markers_get_the_passage_that_supports_them(
    fake_openai, owner, notebook, library, streamed
):
    fake_openai.chat_replies.append(MARKERLESS)

    answer = ask(owner, notebook, streamed)

    assert answer.message.content == (
        "Grey herons wait at the edge of the pond [1]. "
        "The night train to Vienna leaves the central station at eleven [2]. "
        "Penguins read newspapers on the moon."
    )
    first, second = answer.message.citations.all()
    assert first.chunk.text == HERONS.decode() and first.supported is True
    assert second.chunk.text == TRAINS.decode() and second.supported is True
    assert {citation.n for citation in answer.message.citations.filter(attributed=True)} == {1, 2}
    assert unsupported_sentences(answer.message) == ["Penguins read newspapers on the moon."]


def test_the_page_marks_placed_citations_and_the_unsupported_sentence(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append(MARKERLESS)
    answer = ask(owner, notebook, streamed=False)

    html = str(link_citations(answer.message))

    assert html.count('class="cite cite-attributed"') == 2
    assert html.count('class="unsupported-mark"') == 1
    assert "the moon <span" in html  # the mark sits on the sentence, before its full stop


def test_a_marker_the_model_placed_is_not_flagged_as_placed_by_loupe(
    fake_openai, owner, notebook, library
):
    herons = "Grey herons wait motionless at the edge of the pond"
    fake_openai.chat_replies.append(
        f"{herons} [1]. The night train to Vienna leaves the central station at eleven."
    )

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    cited = {citation.n: citation for citation in answer.message.citations.all()}
    assert cited[1].chunk.text == HERONS.decode()
    assert cited[2].chunk.text == TRAINS.decode()
    assert not cited[1].attributed
    assert cited[2].attributed
    assert unsupported_sentences(answer.message) == []


def test_ask_json_says_which_citations_loupe_placed_and_what_is_unsupported(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append(MARKERLESS)
    out = StringIO()

    call_command(
        "ask",
        "Where do herons wait and when does the train leave?",
        "--user", owner.username, "--notebook", notebook.title, "--json",
        stdout=out,
    )  # fmt: skip

    payload = json.loads(out.getvalue())
    assert [citation["attributed"] for citation in payload["citations"]] == [True, True]
    assert payload["unsupported"] == ["Penguins read newspapers on the moon."]


def test_a_sentence_with_only_a_marker_of_no_passage_is_attributed_too():
    passages = [HERONS.decode(), TRAINS.decode()]

    attribution = attribute_sentences(
        "Herons wait motionless at the edge of the pond [7]. So it is.", passages
    )

    # "So it is." makes no claim; the invented [7] is left for map_markers to strip.
    assert attribution.text == "Herons wait motionless at the edge of the pond [7] [1]. So it is."
    assert attribution.attributed == {1}
    assert attribution.unsupported == []


def test_a_marker_opening_the_next_sentence_counts_for_the_one_before():
    passages = [HERONS.decode()]

    attribution = attribute_sentences("Herons wait at the pond. [1] They are grey.", passages)

    assert attribution.text == "Herons wait at the pond. [1] They are grey [1]."
    assert attribution.attributed == set()


def test_code_blocks_tables_and_headings_get_no_marker():
    passages = [HERONS.decode()]
    reply = (
        "## Grey herons\n\n"
        "They wait at the edge of the pond:\n\n"
        "```\nherons wait motionless at the edge of the pond\n```\n\n"
        "| bird | waits at |\n| --- | --- |\n| grey herons | the edge of the pond |\n"
    )

    attribution = attribute_sentences(reply, passages)

    assert attribution.text == reply
    assert attribution.unsupported == []
