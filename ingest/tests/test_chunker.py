import pytest

from ingest.chunker import TOKEN_RE, chunk_passages
from ingest.passages import Passage


def words(count: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{number}" for number in range(count))


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


def test_short_passage_is_one_chunk_with_its_span():
    chunks = chunk_passages([Passage(text="  Hello, world!  ", page=3)], window=420, overlap=50)
    assert len(chunks) == 1
    assert chunks[0].text == "Hello, world!"
    assert (chunks[0].char_start, chunks[0].char_end) == (2, 15)
    assert chunks[0].page == 3


def test_a_thousand_tokens_make_windows_at_0_370_and_740():
    chunks = chunk_passages([Passage(text=words(1000))])

    assert [tokens(chunk.text)[0] for chunk in chunks] == ["w0", "w370", "w740"]
    assert [len(tokens(chunk.text)) for chunk in chunks] == [420, 420, 260]
    assert tokens(chunks[-1].text)[-1] == "w999"


def test_consecutive_chunks_share_exactly_fifty_tokens():
    chunks = chunk_passages([Passage(text=words(1000))])

    for first, second in zip(chunks, chunks[1:], strict=False):
        first_tokens, second_tokens = tokens(first.text), tokens(second.text)
        assert first_tokens[-50:] == second_tokens[:50]
        assert first_tokens[-51] != second_tokens[0]


def test_exactly_one_window_of_tokens_is_one_chunk():
    assert len(chunk_passages([Passage(text=words(420))])) == 1
    assert len(chunk_passages([Passage(text=words(421))])) == 2


def test_chunks_never_cross_passages_and_keep_their_page():
    first_page = Passage(text=words(500, prefix="one"), page=1)
    second_page = Passage(text=words(30, prefix="two"), page=2)

    chunks = chunk_passages([first_page, second_page])

    assert [chunk.page for chunk in chunks] == [1, 1, 2]
    assert all("two" not in chunk.text for chunk in chunks if chunk.page == 1)
    assert all("one" not in chunk.text for chunk in chunks if chunk.page == 2)
    assert chunks[2].char_start == 0  # spans start again in the new passage


def test_spans_index_into_the_passage_text_exactly():
    text = "Erste Zeile,\n  zweite   Zeile; \t dritte (Zeile)!\n\n" * 120
    passage = Passage(text=text, page=7)

    chunks = chunk_passages([passage])

    assert len(chunks) > 1
    for chunk in chunks:
        assert passage.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text == chunk.text.strip()


def test_unicode_words_count_as_one_token_each():
    text = "Größenänderung über Straße 東京都 Привет café"
    assert tokens(text) == ["Größenänderung", "über", "Straße", "東京都", "Привет", "café"]

    chunks = chunk_passages([Passage(text=text)], window=3, overlap=1)

    assert [chunk.text for chunk in chunks] == [
        "Größenänderung über Straße",
        "Straße 東京都 Привет",
        "Привет café",
    ]


def test_each_punctuation_character_is_its_own_token():
    assert tokens("Wait... what?!") == ["Wait", ".", ".", ".", "what", "?", "!"]

    chunks = chunk_passages([Passage(text="a... b")], window=2, overlap=0)

    assert [chunk.text for chunk in chunks] == ["a.", "..", "b"]


def test_empty_or_whitespace_passages_give_no_chunk():
    passages = [Passage(text="", page=1), Passage(text=" \n\t  \n", page=2)]
    assert chunk_passages(passages) == []


def test_overlap_must_be_smaller_than_the_window():
    with pytest.raises(ValueError, match="overlap"):
        chunk_passages([Passage(text="a b c")], window=5, overlap=5)
