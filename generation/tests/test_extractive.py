import pytest

from billing.models import Usage
from generation import extractive
from generation.answering import answer_question
from notebooks.models import Message
from providers import local_e5

PONDS = (
    "Grey herons wait motionless at the edge of the pond. "
    "The pond freezes in January. "
    "Herons eat fish, frogs and small mammals."
)
TRAINS = "The night train to Vienna leaves at eleven. Tickets are sold at the station."


def passages(*texts: str) -> list[extractive.Passage]:
    """Passages ranked in the order given, from different documents."""
    return [extractive.Passage(text=text, document=rank) for rank, text in enumerate(texts)]


def test_sentences_sharing_the_questions_words_are_picked_and_cited():
    text = extractive.answer("When does the night train leave?", passages(PONDS, TRAINS), limit=1)

    assert text == "The night train to Vienna leaves at eleven. [2]"


def test_sentences_keep_the_number_of_the_passage_they_came_from():
    text = extractive.answer(
        "What do herons eat, and where is the station?", passages(PONDS, TRAINS)
    )

    assert "Herons eat fish, frogs and small mammals. [1]" in text
    assert "Tickets are sold at the station. [2]" in text
    assert "freezes" not in text


def test_stopwords_alone_do_not_make_a_sentence_match():
    text = extractive.answer("What is it like at the start of January?", passages(PONDS), limit=1)

    assert text == "The pond freezes in January. [1]"


def test_a_record_named_by_one_digit_is_the_row_quoted():
    records = "\n".join(
        [
            "| Record Number | Percent Increment | date |",
            "| --- | --- | --- |",
            *(f"| {n} | {n * 7.5:.1f}% | 0{n}-01-1960 |" for n in range(10)),
        ]
    )

    text = extractive.answer("Which date is recorded for record number 5?", passages(records))

    assert "Record Number: 5; Percent Increment: 37.5%; date: 05-01-1960 [1]" in text


def test_an_answer_has_at_most_three_sentences_in_document_order():
    passage = " ".join(f"Herons nest in colony {n}." for n in range(6))

    text = extractive.answer("Where do herons nest?", passages(passage))

    assert text.count("[1]") == 3
    positions = [text.index(f"colony {n}") for n in range(6) if f"colony {n}" in text]
    assert positions == sorted(positions)


def test_without_a_shared_word_the_best_passage_opening_is_quoted():
    text = extractive.answer("Quantum chromodynamics?", passages(PONDS, TRAINS))

    assert text == (
        "Grey herons wait motionless at the edge of the pond. [1] The pond freezes in January. [1]"
    )


@pytest.mark.local_models
def test_without_a_model_server_the_answer_is_extractive_and_quotes_the_source(
    settings, owner, notebook, add_ready_source
):
    settings.OPENAI_BASE_URL = ""
    settings.SIMILARITY_FLOOR = -1.0  # the local model's own floor
    source = add_ready_source(notebook, (PONDS + " " + TRAINS).encode(), "ponds.txt")

    answer = answer_question(user=owner, notebook=notebook, question="What do herons eat?")

    assert source.chunks.get().embedding_model == local_e5.MODEL_NAME
    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert "Herons eat fish, frogs and small mammals. [1]" in answer.message.content
    assert len(answer.citations) == 1
    citation = answer.citations[0]
    assert citation.source_id == source.pk
    assert "Herons eat fish" in citation.quote
    assert citation.similarity >= 0.8
    assert set(Usage.objects.values_list("kind", "model")) == {("embedding", local_e5.MODEL_NAME)}


def test_a_sentence_a_note_copies_from_an_upload_is_quoted_from_the_upload():
    upload = extractive.Passage(
        text="Night trains leave Vienna at ten. A sleeper berth costs 120 euros in winter.",
        document=1,
    )
    note = extractive.Passage(
        text="A sleeper berth costs 120 euros in winter.", document=2, restates=True
    )

    text = extractive.answer("How much is a sleeper berth?", [note, upload])

    assert "A sleeper berth costs 120 euros in winter. [2]" in text
    assert "[1]" not in text


def test_of_sentences_holding_the_same_question_words_the_one_in_the_closest_part_is_quoted():
    # Both sentences hold "heron" and "winter" alone; the question's meaning is nearer the
    # second part of the passage (three words a part), whose sentence answers it.
    text = "Herons stay in winter. Herons fly south in winter."
    question = "Where do herons go in winter?"
    far_then_close = extractive.Passage(text=text, closeness=(0.70, 0.90), part_words=4)
    close_then_far = extractive.Passage(text=text, closeness=(0.90, 0.70), part_words=4)

    assert extractive.answer(question, [far_then_close], limit=1) == (
        "Herons fly south in winter. [1]"
    )
    assert extractive.answer(question, [close_then_far], limit=1) == "Herons stay in winter. [1]"
    # Without closeness the first sentence of equal words wins (by position).
    assert extractive.answer(question, [extractive.Passage(text=text)], limit=1) == (
        "Herons stay in winter. [1]"
    )


def test_an_offline_answer_reads_the_retrieved_passages_closeness_to_the_question(
    settings, owner, notebook, add_ready_source, fake_openai, monkeypatch
):
    from generation.answering import preparing as answering

    settings.CHAT_MODEL = ""  # no chat model: extractive answers
    settings.RETRIEVAL_WINDOW_WORDS = 4
    notebook.chat_length = "shorter"  # one sentence
    notebook.save()
    add_ready_source(notebook, b"Herons stay in winter. Herons fly south in winter.", "h.txt")
    asked = []

    def closeness(parts):
        def read(*, hits, query_vector, model):
            asked.append((len(hits), len(query_vector), model))
            return [parts for _ in hits]

        return read

    question = "Where do herons go in winter?"
    monkeypatch.setattr(answering, "part_closeness", closeness((0.70, 0.90)))
    second = answer_question(user=owner, notebook=notebook, question=question)
    monkeypatch.setattr(answering, "part_closeness", closeness((0.90, 0.70)))
    first = answer_question(user=owner, notebook=notebook, question=question)

    assert second.message.content == "Herons fly south in winter. [1]"
    assert first.message.content == "Herons stay in winter. [1]"
    assert asked == [(1, settings.EMBEDDING_DIMENSIONS, settings.EMBEDDING_MODEL)] * 2
