"""Questions the sources do not cover get a fixed answer naming the closest passages, with
no citation: judged by the search before any model call, or said by the chat model."""

import pytest
from django.utils import translation

from generation import not_covered, prompts
from generation.answering import answer_question, stream_answer
from notebooks.models import Message
from retrieval import coverage
from retrieval.search import scope_params

HERONS = b"Grey herons wait motionless at the edge of the pond until a fish swims past."
TRAINS = b"The night train to Vienna leaves the central station at eleven each evening."
BREAD = b"Sourdough bread needs a starter that is fed with flour and water every day."


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


@pytest.fixture
def offline(settings, fake_openai):
    """The test server embeds; no chat model: answers are extractive."""
    settings.CHAT_MODEL = ""


def test_a_question_the_sources_do_not_cover_is_refused_offline(
    offline, fake_openai, owner, notebook, library
):
    answer = answer_question(user=owner, notebook=notebook, question="Who painted the Mona Lisa?")

    assert answer.message.mode == Message.Mode.REFUSAL
    assert answer.citations == []
    assert answer.message.content.startswith("Your sources don't seem to cover this")
    # The closest passages are named, as the search ranked them, and kept with the answer.
    assert answer.passages
    assert f"“{answer.passages[0].chunk.source.title}”" in answer.message.content
    assert fake_openai.chat_requests == []


def test_a_covered_question_is_answered_offline(offline, owner, notebook, library):
    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert answer.citations


def test_with_a_chat_model_an_uncovered_question_costs_no_model_call(
    fake_openai, owner, notebook, library
):
    answer = answer_question(
        user=owner, notebook=notebook, question="How many moons does Jupiter have?"
    )

    assert answer.message.mode == Message.Mode.REFUSAL
    assert answer.citations == []
    assert fake_openai.chat_requests == []


def test_the_refusal_is_in_the_askers_language(offline, owner, notebook, library):
    with translation.override("de"):
        answer = answer_question(user=owner, notebook=notebook, question="Wer malte die Mona Lisa?")

    assert answer.message.mode == Message.Mode.REFUSAL
    assert answer.message.content.startswith("Ihre Quellen scheinen das nicht abzudecken")


def test_the_model_is_told_it_may_say_the_passages_do_not_answer(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append("Herons wait at the pond [1].")

    answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    system = fake_openai.chat_requests[0].body["messages"][0]["content"]
    assert prompts.NOT_COVERED_SENTINEL in system


@pytest.mark.parametrize("reply", ["NOT_IN_SOURCES", "**Not in sources.**", "not-in-sources"])
def test_a_model_that_says_not_covered_gets_the_fixed_answer(
    fake_openai, owner, notebook, library, reply
):
    fake_openai.chat_replies.append(reply)

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert answer.message.mode == Message.Mode.REFUSAL
    assert answer.message.model == "fake-chat"
    assert answer.message.content.startswith("Your sources don't seem to cover this")
    assert "The closest passages are in “herons”" in answer.message.content
    assert answer.citations == []


def test_a_streamed_not_covered_reply_is_stored_as_the_fixed_answer(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append("NOT_IN_SOURCES")

    _evidence, *deltas, answer = stream_answer(
        user=owner, notebook=notebook, question="Where do herons wait?"
    )

    assert "".join(deltas) == "NOT_IN_SOURCES"  # shown while it streams, then replaced
    assert answer.message.mode == Message.Mode.REFUSAL
    assert answer.message.content.startswith("Your sources don't seem to cover this")
    assert answer.citations == []


def test_a_reply_that_cites_a_passage_is_an_answer_even_if_it_names_the_sentinel():
    assert not not_covered.model_declined("Herons wait at the pond [1]. NOT_IN_SOURCES")
    assert not not_covered.model_declined("The heron is not in sourcesful ponds.")


def test_a_follow_up_with_a_chat_model_is_left_to_the_model(fake_openai, owner, notebook, library):
    fake_openai.chat_replies += ["Herons wait at the pond [1].", "Until a fish swims past [1]."]
    first = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    answer = answer_question(
        user=owner,
        notebook=notebook,
        question="And for how long, exactly?",
        conversation=first.conversation,
    )

    assert answer.message.mode == Message.Mode.LLM
    assert len(fake_openai.chat_requests) == 2


def test_coverage_weighs_the_questions_rare_words(fake_openai, owner, notebook, library):
    from retrieval.services import retrieve_assessed

    covered = retrieve_assessed(
        user=owner, notebook=notebook, question="When does the night train to Vienna leave?"
    ).coverage
    uncovered = retrieve_assessed(
        user=owner, notebook=notebook, question="When does the Roman empire fall?"
    ).coverage

    assert covered is not None and uncovered is not None
    assert covered.words == 1.0 and covered.covered
    assert uncovered.words < coverage.WORDS_FALLBACK and not uncovered.covered


def test_in_a_large_notebook_word_rarity_is_counted_on_a_sample_of_its_chunks(
    fake_openai, owner, notebook, add_ready_source, monkeypatch
):
    from library import embedding_state
    from providers import embeddings
    from retrieval.services import retrieve_assessed

    more = [f"Note {n} on the garden: tomatoes want sun and water.".encode() for n in range(9)]
    for number, text in enumerate([HERONS, TRAINS, BREAD, *more]):
        add_ready_source(notebook, text, f"source-{number}.txt")
    monkeypatch.setattr(coverage, "RARITY_SAMPLE", 4)
    question = "When does the night train to Vienna leave?"
    retrieved = retrieve_assessed(user=owner, notebook=notebook, question=question)
    hits, judged = retrieved.hits, retrieved.coverage

    _, counts = coverage.signals(
        question=question,
        hits=hits,
        query_vector=embeddings.embed_query(question, user=owner, model=embedding_state.active()),
        model=embedding_state.active_model(),
        scope=scope_params(notebook=notebook),
    )
    assert {total for _config, _lexeme, total, _df, _in_hits in counts} <= {3, 4}  # of 12
    assert judged is not None
    assert judged.words == 1.0 and judged.covered  # the hits are counted whole


def _rarity(owner, notebook, question, **scope):
    """Each of the question's lexemes with the chunks counted and those holding it."""
    from library import embedding_state
    from providers import embeddings
    from retrieval.services import retrieve

    hits = retrieve(user=owner, notebook=notebook, question=question, **scope)
    source = scope.get("source")
    _, counts = coverage.signals(
        question=question,
        hits=hits,
        query_vector=embeddings.embed_query(question, user=owner, model=embedding_state.active()),
        model=embedding_state.active_model(),
        scope=scope_params(
            notebook=notebook,
            source_id=source.pk if source else None,
            sources=scope.get("sources"),
        ),
    )
    return hits, sorted((lexeme, total, df) for _config, lexeme, total, df, _in in counts)


def test_word_rarity_is_counted_over_the_searched_sources_however_many_passages_come_back(
    fake_openai, owner, notebook, library, add_ready_source, settings
):
    # Eight passages reach every source; two, only some: the words weigh the same (with the
    # rarity of the hits' sources alone, a verdict changed with RETRIEVAL_K).
    garden = [f"Note {n} on the garden: tomatoes want sun and water.".encode() for n in range(4)]
    for number, text in enumerate(garden):
        add_ready_source(notebook, text, f"garden-{number}.txt")
    question = "When does the night train to Vienna leave the garden?"
    weighed = {}
    for k in (8, 2):
        settings.RETRIEVAL_K = k
        hits, weighed[k] = _rarity(owner, notebook, question)
        assert len(hits) == min(k, 7)  # seven sources of a chunk each
    assert weighed[8] == weighed[2]
    assert {total for _lexeme, total, _df in weighed[8]} == {7}  # every source's one chunk
    assert ("garden", 7, 4) in weighed[8]

    # Only the sources searched count: those ticked, or the one asked about.
    ticked = [source.pk for source in library]
    _, of_ticked = _rarity(owner, notebook, question, sources=ticked)
    assert {total for _lexeme, total, _df in of_ticked} == {3}
    assert ("garden", 3, 0) in of_ticked
    _, of_one = _rarity(owner, notebook, question, source=library[1])
    assert {total for _lexeme, total, _df in of_one} == {1}


@pytest.mark.local_models
def test_with_the_local_model_its_similarity_decides(settings, owner, notebook, add_ready_source):
    settings.OPENAI_BASE_URL = ""
    settings.SIMILARITY_FLOOR = 0.0  # passages come back: the coverage judges them
    add_ready_source(notebook, HERONS + b" " + TRAINS + b" " + BREAD, "nature.txt")

    answered = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")
    refused = answer_question(user=owner, notebook=notebook, question="Who painted the Mona Lisa?")

    assert answered.message.mode == Message.Mode.EXTRACTIVE
    assert refused.message.mode == Message.Mode.REFUSAL
    assert refused.message.content.endswith("The closest passages are in “nature”.")
