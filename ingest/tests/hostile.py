"""Hostile files, made by the tests themselves: PDFs with lying, looping or deep page lists,
deep nesting, a page the size of a wall, and an image that declares ten gigapixels in a few
hundred bytes."""

from __future__ import annotations

import struct
import zlib

TEXT = b"BT /F1 12 Tf 72 720 Td (Herons wait at the edge of the pond for fish to come near.) Tj ET"
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
CONTENT = b"<< /Length %d >>\nstream\n" % len(TEXT) + TEXT + b"\nendstream"


def pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF of the given objects (numbered from 1) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, root)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def page(parent: bytes = b"/Parent 2 0 R", box: bytes = b"[0 0 612 792]", extra: bytes = b""):
    return (
        b"<< /Type /Page " + parent + b" /MediaBox " + box + b" /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> " + extra + b">>"
    )


def page_objects(count_declared: int) -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count_declared,
        page(),
        CONTENT,
        FONT,
    ]


def millions_of_pages() -> bytes:
    """One page, and a page list that claims five million."""
    return pdf(page_objects(5_000_000))


def million_page_refs(count: int = 1_000_000) -> bytes:
    """A page list naming one page `count` times: each name counts as a page."""
    objects = page_objects(count)
    objects[1] = b"<< /Type /Pages /Kids [" + b"3 0 R " * count + b"] /Count %d >>" % count
    return pdf(objects)


def deeply_nested(depth: int = 100_000) -> bytes:
    """A page holding an array nested `depth` deep."""
    objects = page_objects(1)
    objects[2] = page(extra=b"/Junk " + b"[" * depth + b"]" * depth + b" ")
    return pdf(objects)


def nested_page_tree(depth: int = 5000) -> bytes:
    """The one page under `depth` levels of page-tree nodes."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % (level + 3))
    leaf = page(parent=b"/Parent %d 0 R" % (depth + 1))
    leaf = leaf.replace(b"4 0 R", b"%d 0 R" % (depth + 3))
    leaf = leaf.replace(b"5 0 R", b"%d 0 R" % (depth + 4))
    objects.append(leaf)
    objects += [CONTENT, FONT]
    return pdf(objects)


def page_tree_loop() -> bytes:
    """A page list that names itself among its kids."""
    objects = page_objects(1)
    objects[1] = b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>"
    return pdf(objects)


def giant_page() -> bytes:
    """A 200 x 200 inch page: 900 megapixels at 150 dpi."""
    objects = page_objects(1)
    objects[2] = page(box=b"[0 0 14400 14400]")
    return pdf(objects)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bomb(width: int = 100_000, height: int = 100_000) -> bytes:
    """A PNG declaring width x height pixels (ten gigapixels), a few hundred bytes long."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (width + 1) * 4, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", rows)
        + _png_chunk(b"IEND", b"")
    )
