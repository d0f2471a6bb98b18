"""E-books (.epub, versions 2 and 3): the chapters in reading order, headings as sections.

The package document (found through META-INF/container.xml) lists the chapters in its
spine; each is read as HTML (`html_blocks`), its <h1>-<h6> continuing the section path of
the chapters before, so a chapter is a section. A chapter without a heading takes its
title from the book's own table of contents. The navigation document and a contents page
made of links are left out: they repeat the headings. The title is the book's.
"""

from __future__ import annotations

import zipfile
from urllib.parse import unquote

from lxml import etree

from ingest.loaders import html_blocks
from ingest.loaders.blocks import DocumentText, clean
from ingest.loaders.containers import join_part, read_part, xml_part
from ingest.passages import LoaderError, Passage
from texts import Text

OPF = "{http://www.idpf.org/2007/opf}"
DC = "{http://purl.org/dc/elements/1.1/}"
CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
_HTML_TYPES = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}


def load(archive: zipfile.ZipFile, name: str) -> tuple[list[Passage], str]:
    container = xml_part(archive, "META-INF/container.xml", name=name)
    rootfile = None if container is None else container.find(f".//{CONTAINER}rootfile")
    package_part = rootfile.get("full-path", "") if rootfile is not None else ""
    package = xml_part(archive, package_part, name=name) if package_part else None
    if package is None:
        raise LoaderError(
            Text("“%(name)s” is not a complete e-book: its package document is missing.", name=name)
        )
    manifest = {}
    for item in package.iter(f"{OPF}item"):
        href = join_part(package_part, unquote(item.get("href", "")))
        manifest[item.get("id", "")] = (
            href,
            item.get("media-type", ""),
            item.get("properties", ""),
        )
    titles = _contents_titles(archive, package, manifest, name)
    out = DocumentText()
    for itemref in package.iter(f"{OPF}itemref"):
        href, media_type, properties = manifest.get(itemref.get("idref", ""), ("", "", ""))
        if not href or media_type not in _HTML_TYPES or "nav" in properties.split():
            continue
        data = read_part(archive, href)
        tree = html_blocks.parse(data) if data else None
        if tree is None or html_blocks.is_contents_page(tree):
            continue
        body = tree.find("body")
        if body is None:
            continue
        if not any(True for _ in body.iter("h1", "h2", "h3", "h4", "h5", "h6")) and href in titles:
            out.heading(0, titles[href])
        html_blocks.add_blocks(body, out)
        out.end_passage()
    title = package.find(f".//{DC}title")
    return out.finish(), clean(title.text or "") if title is not None else ""


def _contents_titles(
    archive: zipfile.ZipFile,
    package: etree._Element,
    manifest: dict[str, tuple[str, str, str]],
    name: str,
) -> dict[str, str]:
    """Chapter part → its title in the NCX table of contents (EPUB 2, kept by most EPUB 3)."""
    titles: dict[str, str] = {}
    for href, media_type, _properties in manifest.values():
        if media_type != "application/x-dtbncx+xml":
            continue
        ncx = xml_part(archive, href, name=name)
        if ncx is None:
            continue
        for point in ncx.iter(f"{NCX}navPoint"):
            text = point.find(f"{NCX}navLabel/{NCX}text")
            content = point.find(f"{NCX}content")
            if text is None or content is None:
                continue
            target = join_part(href, unquote(content.get("src", "").split("#")[0]))
            titles.setdefault(target, clean(text.text or ""))
    return titles
