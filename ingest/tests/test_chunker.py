from ingest.chunker import chunk_passages
from ingest.passages import Passage


def test_short_passage_is_one_chunk_with_its_span():
    chunks = chunk_passages([Passage(text="  Hello, world!  ", page=3)], window=420, overlap=50)
    assert len(chunks) == 1
    assert chunks[0].text == "Hello, world!"
    assert (chunks[0].char_start, chunks[0].char_end) == (2, 15)
    assert chunks[0].page == 3
