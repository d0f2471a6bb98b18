"""Windows (retrieval/windows.py): chunks embedded in parts too, and hybrid search scoring a
chunk by its closest part by the active model."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from library.models import Chunk, ChunkWindow
from providers import embeddings
from providers.tests.fake_openai import fake_embedding
from retrieval import windows
from retrieval.reembed import run_reembed, start_reembed
from retrieval.search import Fusion
from retrieval.tests.chunks import MODEL, add_chunk, hybrid, make_source, texts

WORDS = [f"w{n}" for n in range(250)]


def test_a_text_is_cut_into_consecutive_parts_with_a_short_tail_joining_the_last():
    parts = windows.split_windows(" ".join(WORDS), 80)

    # 250 words: 0-80, 80-160, 160-250 (a tail of 10 words joins the part before it).
    assert [part.split() for part in parts] == [WORDS[0:80], WORDS[80:160], WORDS[160:250]]


def test_a_tail_of_half_a_window_or_more_is_a_part_of_its_own():
    parts = windows.split_windows(" ".join(WORDS[:200]), 80)

    assert [len(part.split()) for part in parts] == [80, 80, 40]


def test_a_text_of_at_most_one_and_a_half_windows_gets_no_parts():
    # Its own vector stands for it: no second embedding of the same words.
    assert windows.split_windows(" ".join(WORDS[:120]), 80) == []
    assert windows.split_windows("", 80) == []
    assert len(windows.split_windows(" ".join(WORDS[:121]), 80)) == 2


def test_whitespace_runs_and_line_breaks_do_not_count_as_words():
    text = "  a\n\nb\t c " * 30  # 90 words
    words = text.split()
    parts = windows.split_windows(text, 40)

    # 0-40 and 40-90 (a tail of 10 joins); the words joined by single spaces.
    assert parts == [" ".join(words[:40]), " ".join(words[40:])]


@pytest.mark.parametrize(
    "setting, model, expected",
    [
        ("local", "local/multilingual-e5-small", True),
        ("local", "local/universal-sentence-encoder-multilingual-3", False),
        ("local", "text-embedding-3-small", False),
        ("on", "text-embedding-3-small", True),
        ("off", "local/multilingual-e5-small", False),
    ],
)
def test_which_models_get_windows(settings, setting, model, expected):
    settings.RETRIEVAL_WINDOWS = setting
    assert windows.enabled_for(model) is expected


LONG = (
    "Grey herons wait by the pond at dawn. " * 6
    + "Night trains pass the reeds and the old signal box. " * 6
).encode()


@pytest.fixture
def windowed(fake_openai, settings):
    settings.RETRIEVAL_WINDOWS = "on"
    settings.RETRIEVAL_WINDOW_WORDS = 12
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 60, 0
    return fake_openai


def test_ingest_embeds_each_chunk_s_parts_by_the_active_model(windowed, notebook, add_ready_source):
    add_ready_source(notebook, LONG)

    chunks = list(Chunk.objects.order_by("ordinal"))
    stored = list(ChunkWindow.objects.order_by("chunk_id", "ordinal"))
    expected = [
        (chunk.pk, ordinal, part)
        for chunk in chunks
        for ordinal, part in enumerate(windows.split_windows(chunk.text, 12))
    ]
    assert expected, "the chunks are long enough to have parts"
    assert [(w.chunk_id, w.ordinal) for w in stored] == [(c, o) for c, o, _ in expected]
    assert {w.model for w in stored} == {"fake-embed"}
    # Each part's vector is the model's vector of exactly that part's words.
    for window, (_, _, part) in zip(stored, expected, strict=True):
        assert list(window.embedding) == pytest.approx(fake_embedding(part, 64), abs=1e-6)
    # The parts went to the embeddings endpoint (and are billed alike); a chunk with parts
    # was not embedded whole: its vector is the mean of its parts', normalised.
    sent = [text for r in windowed.embedding_requests for text in r.body["input"]]
    assert [part for _, _, part in expected] == [
        t for t in sent if t not in {c.text for c in chunks}
    ]
    for chunk in chunks:
        parts = [w.embedding for w in stored if w.chunk_id == chunk.pk]
        if parts:
            assert chunk.text not in sent
            mean = np.mean(parts, axis=0)
            assert list(chunk.embedding) == pytest.approx(mean / np.linalg.norm(mean), abs=1e-6)


def test_no_parts_are_embedded_where_windows_are_off_for_the_model(
    fake_openai, settings, notebook, add_ready_source
):
    settings.RETRIEVAL_WINDOWS = "local"  # fake-embed is no local model
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 60, 0
    add_ready_source(notebook, LONG)

    assert Chunk.objects.exists()
    assert not ChunkWindow.objects.exists()
    sent = [text for r in fake_openai.embedding_requests for text in r.body["input"]]
    assert sorted(sent) == sorted(Chunk.objects.values_list("text", flat=True))


QUESTION = "Which birds wait at dawn?"  # shares no word with the chunks below


@pytest.fixture
def two_chunks(notebook):
    """A chunk whose vector is far from the question's but one of whose parts is close, and
    one that is fairly close as a whole; both share no word with the question."""
    source = make_source(notebook)
    part_close = add_chunk(source, "Long report, one part on herons.", [0.6, 0.8, 0.0])
    ChunkWindow.objects.create(chunk=part_close, model=MODEL, ordinal=0, embedding=[0.0, 1.0, 0.0])
    ChunkWindow.objects.create(chunk=part_close, model=MODEL, ordinal=1, embedding=[1.0, 0.05, 0.0])
    add_chunk(source, "Short note near the question.", [0.9, 0.436, 0.0])
    add_chunk(source, "Timetable of the night trains.", [0.0, 0.0, 1.0])
    return part_close


def test_a_chunk_with_a_part_close_to_the_question_comes_first(notebook, two_chunks):
    on, off = Fusion(windows=True), Fusion(windows=False)

    assert texts(hybrid(notebook, question=QUESTION, fusion=off))[:2] == [
        "Short note near the question.",
        "Long report, one part on herons.",
    ]
    hits = hybrid(notebook, question=QUESTION, fusion=on)
    assert texts(hits)[:2] == ["Long report, one part on herons.", "Short note near the question."]
    # The hit still carries the chunk's own similarity (citations, the floor).
    assert hits[0].similarity == pytest.approx(0.6)


def test_parts_by_another_model_are_never_compared(notebook, two_chunks):
    ChunkWindow.objects.filter(chunk=two_chunks).update(model="other-model")

    hits = hybrid(notebook, question=QUESTION, fusion=Fusion(windows=True))
    assert texts(hits)[0] == "Short note near the question."


def test_the_setting_decides_when_the_fusion_does_not(settings, notebook, two_chunks):
    settings.RETRIEVAL_WINDOWS = "on"
    assert texts(hybrid(notebook, question=QUESTION))[0] == "Long report, one part on herons."
    settings.RETRIEVAL_WINDOWS = "off"
    assert texts(hybrid(notebook, question=QUESTION))[0] == "Short note near the question."


def test_the_command_embeds_the_parts_of_chunks_that_have_none(
    fake_openai, settings, notebook, add_ready_source, capsys
):
    settings.RETRIEVAL_WINDOWS = "off"
    settings.RETRIEVAL_WINDOW_WORDS = 12
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 60, 0
    add_ready_source(notebook, LONG)
    assert not ChunkWindow.objects.exists()

    with pytest.raises(CommandError, match="Windows are off for fake-embed"):
        call_command("embed_windows")

    settings.RETRIEVAL_WINDOWS = "on"
    call_command("embed_windows")
    made = ChunkWindow.objects.count()
    expected = sum(
        len(windows.split_windows(t, 12)) for t in Chunk.objects.values_list("text", flat=True)
    )
    assert made == expected > 0
    assert f"{made} windows embedded by fake-embed" in capsys.readouterr().out

    # Resumable: a second run finds nothing left to embed.
    requests = len(fake_openai.embedding_requests)
    call_command("embed_windows")
    assert ChunkWindow.objects.count() == made
    assert len(fake_openai.embedding_requests) == requests


def test_a_model_switch_builds_the_next_model_s_parts_and_drops_the_old_ones(
    windowed, settings, notebook, add_ready_source
):
    add_ready_source(notebook, LONG)
    old = ChunkWindow.objects.count()
    assert old > 0
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "fake-embed-2": {"input_per_million": "1"}}
    settings.EMBEDDING_MODEL, settings.EMBEDDING_DIMENSIONS = "fake-embed-2", 32

    start_reembed(model=embeddings.configured_model())
    seen = []
    run_reembed(
        batch_size=1,
        on_batch=lambda state: seen.append(
            set(ChunkWindow.objects.values_list("model", flat=True))
        ),
    )

    # While the switch was under way both models' parts were there; after it, only the new.
    assert {"fake-embed", "fake-embed-2"} in seen
    assert set(ChunkWindow.objects.values_list("model", flat=True)) == {"fake-embed-2"}
    assert ChunkWindow.objects.count() == old
    assert all(len(w.embedding) == 32 for w in ChunkWindow.objects.all())


def test_a_database_without_windows_for_the_active_model_is_warned_about(
    fake_openai, settings, notebook, add_ready_source
):
    from retrieval import checks

    settings.RETRIEVAL_WINDOWS = "off"
    settings.RETRIEVAL_WINDOW_WORDS = 12
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 60, 0
    add_ready_source(notebook, LONG)
    assert checks.chunks_have_windows(None, databases=["default"]) == []

    settings.RETRIEVAL_WINDOWS = "on"
    warnings = checks.chunks_have_windows(None, databases=["default"])
    assert [warning.id for warning in warnings] == ["retrieval.W002"]
    assert "manage.py embed_windows" in warnings[0].hint

    call_command("embed_windows")
    assert checks.chunks_have_windows(None, databases=["default"]) == []


def test_progress_counts_the_parts_and_reaches_the_end_only_with_them(windowed, settings, db):
    settings.EMBEDDING_BATCH_SIZE = 2
    passages = [LONG.decode()[:400], LONG.decode()[400:800], "A short one."]
    parts = [windows.split_windows(text, 12) for text in passages]
    assert all(parts[:2]) and not parts[2]
    seen: list[tuple[int, int]] = []

    vectors, window_vectors = windows.embed_with_windows(
        passages,
        model=embeddings.configured_model(),
        user=None,
        on_progress=lambda done, total: seen.append((done, total)),
    )

    assert [len(v) for v in window_vectors] == [len(p) for p in parts]
    for part, vector in zip(parts[0], window_vectors[0], strict=True):
        assert vector == pytest.approx(fake_embedding(part, 64), abs=1e-6)
    # A text with parts is not embedded whole: its vector is its parts' mean, normalised.
    mean = np.mean(window_vectors[0], axis=0)
    assert vectors[0] == pytest.approx((mean / np.linalg.norm(mean)).tolist(), abs=1e-6)
    assert vectors[2] == pytest.approx(fake_embedding(passages[2], 64), abs=1e-6)
    sent = [text for r in windowed.embedding_requests for text in r.body["input"]]
    assert sorted(sent) == sorted([passages[2], *parts[0], *parts[1]])
    # In texts (3), never the whole before the last batch, which holds parts.
    assert {total for _, total in seen} == {3}
    assert seen[-1] == (3, 3) and all(done < 3 for done, _ in seen[:-1])
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
