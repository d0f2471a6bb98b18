"""A typographic apostrophe (’) in a PDF's text layer stays ’ in its chunks and in the
quotes of the answers that cite them, and a model that writes ' for it is still supported."""

from __future__ import annotations

from pathlib import Path

from reportlab.pdfgen import canvas

from citations.verification import best_support
from generation.answering import answer_question

SENTENCE = "The heron’s nest is on the island’s north shore; it isn’t far from the ferry."


def _pdf(path: Path) -> bytes:
    page = canvas.Canvas(str(path))
    page.drawString(72, 720, SENTENCE)
    page.drawString(72, 700, "Otters fish in the bay.")
    page.showPage()
    page.save()
    return path.read_bytes()


def test_a_pdfs_apostrophes_stay_typographic_in_chunks_and_quotes(
    fake_openai, owner, notebook, add_ready_source, tmp_path
):
    source = add_ready_source(notebook, _pdf(tmp_path / "herons.pdf"), "herons.pdf")
    [chunk] = source.chunks.all()
    assert "The heron’s nest is on the island’s north shore" in chunk.text
    fake_openai.chat_replies.append("The heron's nest is on the island's north shore [1].")

    answer = answer_question(user=owner, notebook=notebook, question="Where is the heron's nest?")

    [cited] = answer.citations
    assert cited.supported
    assert "The heron’s nest is on the island’s north shore" in cited.quote
    assert "'" not in cited.quote


def test_a_claim_with_straight_apostrophes_is_supported_by_typographic_ones():
    support = best_support("It isn't far from the ferry, says the heron's guide.", SENTENCE)

    assert support.supported
    assert support.quote == SENTENCE
