"""Small office files and e-books built by the tests: a zip of the XML parts that matter."""

from __future__ import annotations

import zipfile
from pathlib import Path

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def write_zip(path: Path, parts: dict[str, str | bytes], *, stored_first: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        if stored_first:
            archive.writestr(stored_first, parts[stored_first], compress_type=zipfile.ZIP_STORED)
        for name, data in parts.items():
            if name != stored_first:
                archive.writestr(name, data)
    return path


def content_types(main: str, content_type: str) -> str:
    return (
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        f'content-types"><Override PartName="/{main}" ContentType="{content_type}"/></Types>'
    )


def relationships(*rels: tuple[str, str, str]) -> str:
    items = "".join(
        f'<Relationship Id="{rid}" Type="{RELS}/{kind}" Target="{target}"/>'
        for rid, kind, target in rels
    )
    return f'<?xml version="1.0"?><Relationships xmlns="{REL_NS}">{items}</Relationships>'


def docx(path: Path, body: str, *, comments: str = "", footnotes: str = "") -> Path:
    """A Word document whose body is `body` (w: elements), with styles Heading1/Heading2."""
    styles = (
        f'<w:styles xmlns:w="{W_NS}">'
        '<w:style w:styleId="Title"><w:name w:val="Title"/></w:style>'
        '<w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
        '<w:style w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>'
    )
    rels = [("r1", "styles", "styles.xml")]
    parts: dict[str, str | bytes] = {
        "[Content_Types].xml": content_types(
            "word/document.xml",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        ),
        "word/document.xml": f'<w:document xmlns:w="{W_NS}"><w:body>{body}</w:body></w:document>',
        "word/styles.xml": styles,
    }
    if comments:
        rels.append(("r2", "comments", "comments.xml"))
        parts["word/comments.xml"] = f'<w:comments xmlns:w="{W_NS}">{comments}</w:comments>'
    if footnotes:
        rels.append(("r3", "footnotes", "footnotes.xml"))
        parts["word/footnotes.xml"] = f'<w:footnotes xmlns:w="{W_NS}">{footnotes}</w:footnotes>'
    parts["word/_rels/document.xml.rels"] = relationships(*rels)
    return write_zip(path, parts)


def paragraph(text: str, style: str = "") -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{props}<w:r><w:t xml:space='preserve'>{text}</w:t></w:r></w:p>"


P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"


def _shape(text: str, placeholder: str = "") -> str:
    ph = f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr>' if placeholder else "<p:nvPr/>"
    return (
        f"<p:sp><p:nvSpPr>{ph}</p:nvSpPr><p:txBody>"
        f"<a:p><a:r><a:t>{text}</a:t></a:r></a:p></p:txBody></p:sp>"
    )


def pptx(path: Path, slides: list[tuple[str, str, str]]) -> Path:
    """A deck of (title, body, speaker notes) slides."""
    ns = f'xmlns:p="{P_NS}" xmlns:a="{A_NS}" xmlns:r="{RELS}"'
    ids = "".join(f'<p:sldId id="{256 + n}" r:id="s{n}"/>' for n in range(1, len(slides) + 1))
    parts: dict[str, str | bytes] = {
        "[Content_Types].xml": content_types(
            "ppt/presentation.xml",
            "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
        ),
        "ppt/presentation.xml": (
            f"<p:presentation {ns}><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"
        ),
        "ppt/_rels/presentation.xml.rels": relationships(
            *((f"s{n}", "slide", f"slides/slide{n}.xml") for n in range(1, len(slides) + 1))
        ),
    }
    for n, (title, body, notes) in enumerate(slides, start=1):
        shapes = _shape(title, "title") + _shape(body) + _shape(str(n), "sldNum")
        parts[f"ppt/slides/slide{n}.xml"] = (
            f"<p:sld {ns}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"
        )
        if notes:
            parts[f"ppt/slides/_rels/slide{n}.xml.rels"] = relationships(
                ("n1", "notesSlide", f"../notesSlides/notesSlide{n}.xml")
            )
            parts[f"ppt/notesSlides/notesSlide{n}.xml"] = (
                f"<p:notes {ns}><p:cSld><p:spTree>{_shape('', 'sldImg')}"
                f"{_shape(notes, 'body')}</p:spTree></p:cSld></p:notes>"
            )
    return write_zip(path, parts)


def epub(path: Path, chapters: list[str], *, title: str = "A Book") -> Path:
    """An EPUB 3 whose chapters are XHTML bodies, in spine order."""
    items = "".join(
        f'<item id="c{n}" href="c{n}.xhtml" media-type="application/xhtml+xml"/>'
        for n in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{n}"/>' for n in range(len(chapters)))
    parts: dict[str, str | bytes] = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": (
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">'
            '<rootfiles><rootfile full-path="OEBPS/book.opf"/></rootfiles></container>'
        ),
        "OEBPS/book.opf": (
            '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata '
            f'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata>'
            f"<manifest>{items}</manifest><spine>{spine}</spine></package>"
        ),
    }
    for n, body in enumerate(chapters):
        parts[f"OEBPS/c{n}.xhtml"] = (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>c</title></head><body>{body}</body></html>"
        )
    return write_zip(path, parts, stored_first="mimetype")


ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
)


def odf(path: Path, mimetype: str, body: str) -> Path:
    """An OpenDocument file whose office:body holds `body`."""
    content = (
        f"<office:document-content {ODF_NS}><office:body>{body}</office:body>"
        "</office:document-content>"
    )
    return write_zip(
        path,
        {"mimetype": f"application/vnd.oasis.opendocument.{mimetype}", "content.xml": content},
        stored_first="mimetype",
    )
