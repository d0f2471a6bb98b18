"""Opening office and e-book files safely: their zip and their XML.

An office file is a zip of XML parts, so a hostile one can be a zip bomb (a few KB that
unpack to gigabytes) or carry an XML entity bomb ("billion laughs"). Sizes are checked from
the zip's directory before anything is unpacked, and every read is bounded again in case the
directory lies; XML is parsed without a DTD, entities or the network, and a part that
declares entities is refused outright: OOXML, OpenDocument and EPUB parts never do.
Macros (a .docm's or .xlsm's VBA project) are never read at all.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from lxml import etree

from ingest.passages import LoaderError
from texts import Text

# What all of a document's parts may unpack to, and any one part; a document of prose or a
# workbook a person made stays far below (a 300-page report is a few MB of XML).
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
MAX_PART_BYTES = 128 * 1024 * 1024
# Deflate compresses XML 5-20x; a part that claims more than this over a megabyte is a bomb.
MAX_RATIO = 200
RATIO_FLOOR_BYTES = 1024 * 1024
MAX_PARTS = 20_000

_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=False
)


def damaged(name: str) -> LoaderError:
    return LoaderError(
        Text(
            "“%(name)s” is damaged: its contents are incomplete or corrupted (it may have been "
            "cut off while copying). Open it in the program that made it and save it again.",
            name=name,
        )
    )


def open_zip(path: Path) -> zipfile.ZipFile:
    """The file's zip, its directory checked against the size limits."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise damaged(path.name) from exc
    members = archive.infolist()
    if len(members) > MAX_PARTS:
        raise _too_large(path.name)
    total = 0
    for member in members:
        total += member.file_size
        ratio_too_high = (
            member.file_size > RATIO_FLOOR_BYTES
            and member.file_size > MAX_RATIO * max(member.compress_size, 1)
        )
        if member.file_size > MAX_PART_BYTES or total > MAX_UNPACKED_BYTES or ratio_too_high:
            raise _too_large(path.name)
    return archive


def _too_large(name: str) -> LoaderError:
    return LoaderError(
        Text(
            "“%(name)s” would unpack to more than %(mib)s MiB, or far more than its size "
            "suggests (a “zip bomb”); Loupe does not read it.",
            name=name,
            mib=MAX_UNPACKED_BYTES // (1024 * 1024),
        )
    )


def read_part(archive: zipfile.ZipFile, name: str) -> bytes | None:
    """A part's bytes, None when the document has no such part. The read is bounded by
    MAX_PART_BYTES whatever the directory claimed."""
    try:
        with archive.open(name) as handle:
            data = handle.read(MAX_PART_BYTES + 1)
    except KeyError:
        return None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        # A truncated member, a bad CRC, an encrypted or unknown compression method.
        raise damaged(Path(archive.filename or "document").name) from exc
    if len(data) > MAX_PART_BYTES:
        raise _too_large(Path(archive.filename or "document").name)
    return data


def _declares_entities(name: str) -> LoaderError:
    return LoaderError(
        Text(
            "“%(name)s” declares XML entities, which office documents never do (it may "
            "be an attack on XML readers); Loupe does not read it.",
            name=name,
        )
    )


def refuse_entities(archive: zipfile.ZipFile, *, name: str) -> None:
    """Refuse a document any of whose XML parts declares entities (before a library that
    parses them itself is given it)."""
    for member in archive.infolist():
        if member.filename.endswith((".xml", ".rels")):
            try:
                with archive.open(member) as handle:
                    prolog = handle.read(65536)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
                raise damaged(name) from exc
            if b"<!ENTITY" in prolog:
                raise _declares_entities(name)


def parse_xml(data: bytes, *, name: str) -> etree._Element:
    """A part's XML tree; a part that declares entities is refused (no office or e-book
    part does; an entity bomb must). A document type is allowed: its DTD is never loaded."""
    if b"<!ENTITY" in data[:65536]:
        raise _declares_entities(name)
    try:
        return etree.fromstring(data, parser=_PARSER)
    except etree.XMLSyntaxError as exc:
        raise damaged(name) from exc


def xml_part(archive: zipfile.ZipFile, part: str, *, name: str) -> etree._Element | None:
    data = read_part(archive, part)
    return None if data is None else parse_xml(data, name=name)


def join_part(base: str, target: str) -> str:
    """A relationship's target as a part name: "ppt/slides/slide1.xml" and
    "../notesSlides/notesSlide1.xml" → "ppt/notesSlides/notesSlide1.xml"."""
    if target.startswith("/"):
        return target.lstrip("/")
    parts = base.split("/")[:-1]
    for piece in target.split("/"):
        if piece == "..":
            if parts:
                parts.pop()
        elif piece and piece != ".":
            parts.append(piece)
    return "/".join(parts)


def relationships(archive: zipfile.ZipFile, part: str, *, name: str) -> dict[str, str]:
    """Relationship id → target part name, for one part (its _rels/<part>.rels)."""
    folder, _, file = part.rpartition("/")
    rels_name = f"{folder}/_rels/{file}.rels" if folder else f"_rels/{file}.rels"
    tree = xml_part(archive, rels_name, name=name)
    if tree is None:
        return {}
    found = {}
    for rel in tree:
        if rel.get("TargetMode") == "External":
            continue  # never fetched: a linked image or a web address
        identifier, target = rel.get("Id"), rel.get("Target")
        if identifier and target:
            found[identifier] = join_part(part, target)
    return found


def relationships_by_type(
    archive: zipfile.ZipFile, part: str, *, name: str
) -> dict[str, list[str]]:
    """Relationship type's last word ("comments", "footnotes", "notesSlide") → targets."""
    folder, _, file = part.rpartition("/")
    rels_name = f"{folder}/_rels/{file}.rels" if folder else f"_rels/{file}.rels"
    tree = xml_part(archive, rels_name, name=name)
    found: dict[str, list[str]] = {}
    if tree is None:
        return found
    for rel in tree:
        kind, target = rel.get("Type", ""), rel.get("Target")
        if rel.get("TargetMode") == "External" or not target:
            continue
        found.setdefault(kind.rsplit("/", 1)[-1], []).append(join_part(part, target))
    return found
