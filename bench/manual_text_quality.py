"""How well Loupe reads real manuals: the text of `../shared/data/manual-qa`'s two PDFs as
the loader and chunker make it (no database, no embedding), measured three ways:

- run-together words: tokens of more than 20 letters that occur once in the whole text,
  are not identifiers (no digit, `/`, `@`, `.`, `_`, `-`, no capital inside), and split
  into words of the document's own vocabulary (each seen at least 3 times standing alone)
  of which one is among its 100 most frequent short words ("in", "the", "und"). Real long
  words and compounds recur, or are made of content words only (German's
  "Paketmanagementsystem"); words glued by a lost space ("itisstrongly") hold a small
  frequent one. Shown per 10,000 tokens, beside the same measure on pypdf's text of the
  same file, which used to be Loupe's;
- chunks that still hold a running header: a line whose shape (numbers as `#`) is the first
  or last line of at least a fifth of the raw pages;
- gold quotes found verbatim (whitespace collapsed) in one chunk of the gold page;
- pages that `auto` would send to OCR although their text layer has words (20 or more
  visible characters): target 0 (a contents page's dot leaders used to send it there).

    .venv/bin/python bench/manual_text_quality.py [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

MANUALS = SHARED / "manual-qa"
LONG = 20
_TOKEN_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_IDENTIFIER = re.compile(r"[\d/@._\-]|.[A-Z]")


def _splits_with_small_word(word: str, vocabulary: set[str], small: set[str]) -> bool:
    """Whether `word` is a sequence of vocabulary words, one of them a small frequent one."""
    # reach[i]: (whether word[:i] splits, whether that split used a small word)
    reach: list[tuple[bool, bool]] = [(True, False)] + [(False, False)] * len(word)
    for end in range(2, len(word) + 1):
        for start in range(max(0, end - 30), end - 1):
            ok, used = reach[start]
            piece = word[start:end]
            if ok and piece in vocabulary:
                reach[end] = (True, reach[end][1] or used or piece in small)
    return reach[-1] == (True, True)


def run_together(text: str) -> tuple[int, int, list[str]]:
    tokens = [_TOKEN_EDGE.sub("", token) for token in text.split()]
    counts = collections.Counter(token.casefold() for token in tokens)
    vocabulary = {word for word, n in counts.items() if n >= 3 and word.isalpha()}
    small = {word for word, _ in counts.most_common(300) if word.isalpha() and len(word) <= 4}
    small = set(sorted(small, key=lambda word: -counts[word])[:100])
    glued = [
        token
        for token in tokens
        if len(token) > LONG
        and not _IDENTIFIER.search(token)
        and token.isalpha()
        and counts[token.casefold()] == 1
        and _splits_with_small_word(token.casefold(), vocabulary, small)
    ]
    return len(glued), len(tokens), glued


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    django_setup()
    import pypdfium2 as pdfium
    from pypdf import PdfReader

    from ingest.chunker import chunk_passages
    from ingest.loaders import load_passages
    from ingest.loaders import pdf as pdf_loader
    from ingest.loaders.furniture import shape

    questions = [json.loads(line) for line in (MANUALS / "questions.jsonl").open()]
    results = {}
    for pdf in sorted(MANUALS.glob("*.pdf")):
        started = time.perf_counter()
        passages, page_count, _, _, _ = load_passages("pdf", pdf, pdf_capture="text")
        read_seconds = time.perf_counter() - started
        drafts = chunk_passages(passages)
        loupe_glued, loupe_tokens, examples = run_together(" ".join(p.text for p in passages))
        pypdf_text = " ".join(page.extract_text() or "" for page in PdfReader(pdf).pages)
        pypdf_glued, pypdf_tokens, _ = run_together(pypdf_text)

        document = pdfium.PdfDocument(pdf)
        raw_pages = [
            document[index].get_textpage().get_text_range().replace("\r\n", "\n")
            for index in range(len(document))
        ]
        document.close()
        edge_shapes: collections.Counter[str] = collections.Counter()
        for page in raw_pages:
            lines = [line for line in page.split("\n") if line.strip()]
            edge_shapes.update({shape(line) for line in lines[:1] + lines[-1:]})
        running = {s for s, n in edge_shapes.items() if n >= len(raw_pages) / 5}
        with_header = sum(
            1 for draft in drafts if any(shape(line) in running for line in draft.text.split("\n"))
        )

        found = total = 0
        missing = []
        for question in questions:
            if question["doc"] != pdf.name:
                continue
            total += 1
            quote = " ".join(question["quote"].split())
            on_page = [" ".join(d.text.split()) for d in drafts if d.page == question["page"]]
            if any(quote in text for text in on_page):
                found += 1
            else:
                missing.append(question["id"])
        layer = pdf_loader.read_text_layer(pdf)
        to_ocr_with_words = [
            number
            for number, text in layer.texts.items()
            if len("".join(text.split())) >= 20 and not pdf_loader.is_readable(text)
        ]
        results[pdf.name] = {
            "pages": page_count,
            "chunks": len(drafts),
            "chunks_with_section": sum(1 for draft in drafts if draft.section),
            "read_seconds": round(read_seconds, 2),
            "run_together_per_10k_tokens": round(1e4 * loupe_glued / loupe_tokens, 1),
            "pypdf_run_together_per_10k_tokens": round(1e4 * pypdf_glued / pypdf_tokens, 1),
            "run_together_examples": examples[:8],
            "chunks_with_running_header": with_header,
            "running_header_shapes": sorted(running),
            "quotes_found": f"{found}/{total}",
            "quotes_missing": missing,
            "pages_to_ocr_with_a_text_layer": len(to_ocr_with_words),
        }
    if options.json:
        print(json.dumps(results))
    else:
        for name, figures in results.items():
            print(name)
            for key, value in figures.items():
                print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
