"""A page whose text layer holds only page furniture (a running header, its number, a stray
word) is no passage, and is never sent to the vision reader: OCR would read the furniture
back."""

from ingest.loaders import pdf as pdf_loader
from ingest.tests.hostile import FONT, pdf

HEADER = "Field Guide to Ferns and Mosses"
BODIES = [
    "Ferns grow in damp shade and spread by spores carried on the wind.",
    "Mosses hold water like a sponge and dry out without harm.",
    "Bracken covers hillsides where the soil is poor and acid.",
    "",
    "Liverworts are older than mosses and have no true leaves.",
    "Horsetails were trees in the forests that made the coal.",
]


def _pdf_of(pages: list[list[str]]) -> bytes:
    """A PDF whose pages print the given lines from the top, one under the other."""
    count = len(pages)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count)), count),
        FONT,
    ]
    for i, lines in enumerate(pages):
        shown = b" ".join(b"(%s) Tj 0 -20 Td" % line.encode() for line in lines)
        stream = b"BT /F1 12 Tf 72 720 Td " + shown + b" ET"
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
            b" /Resources << /Font << /F1 3 0 R >> >> >>" % (5 + 2 * i)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return pdf(objects)


def test_a_page_of_furniture_is_neither_a_passage_nor_read_as_an_image(tmp_path, monkeypatch):
    pages = [[HEADER, body, str(n)] for n, body in enumerate(BODIES, start=1)]
    pages[3] = [HEADER, "CONTENTS", "4"]
    path = tmp_path / "guide.pdf"
    path.write_bytes(_pdf_of(pages))
    rendered = []
    monkeypatch.setattr(
        pdf_loader, "render_pages", lambda _path, numbers: rendered.extend(numbers) or []
    )

    passages, page_count, _reader, _title = pdf_loader.load(path, capture="auto")

    assert page_count == 6
    assert [passage.page for passage in passages] == [1, 2, 3, 5, 6]
    assert rendered == []
    assert all(HEADER not in passage.text for passage in passages)
