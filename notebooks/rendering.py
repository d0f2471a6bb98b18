"""Answers as safe HTML: Markdown rendered, then sanitised, then the [n] markers linked.

Nothing a model (or a source it quotes) writes may run script or load remote content in the
page, so the Markdown parser passes no raw HTML through, and nh3 (Ammonia) keeps only a
small set of tags, links only to http, https and mailto, and no images. Our own citation
links are added after sanitising, to text nodes only, by `link_markers`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "p",
    "br",
    "ul",
    "ol",
    "li",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "a",
}
ALLOWED_ATTRIBUTES = {"a": {"href"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "noopener noreferrer nofollow"

# html=False: raw HTML in the answer is shown as text, never parsed as markup.
_markdown = MarkdownIt("commonmark", {"html": False}).enable("table")

# Text between tags of sanitised HTML (which nh3 serialises well-formed).
_TAG_RE = re.compile(r"(<[^>]*>)")
# Inside these a marker stays text: a link in a link is invalid, and code is quoted as is.
_NO_LINK_TAGS = ("a", "code", "pre")


def render_markdown(text: str) -> str:
    """The Markdown text as sanitised HTML. Headings start at h3: the page owns h1 and h2."""
    tokens = _markdown.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 2, 6)}"
    html = _markdown.renderer.render(tokens, _markdown.options, {})
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=LINK_REL,
        strip_comments=True,
    )


def link_markers(html: str, pattern: re.Pattern[str], link: Callable[[re.Match[str]], str]) -> str:
    """Apply `link` to each match of `pattern` in the text nodes of sanitised `html`, except
    inside links and code."""
    parts = _TAG_RE.split(html)
    depth = 0  # how many a/code/pre elements are open around the current text
    for i, part in enumerate(parts):
        if i % 2:  # a tag
            name = part.strip("</>").split(None, 1)[0].lower() if part.strip("</>") else ""
            if name in _NO_LINK_TAGS:
                depth += -1 if part.startswith("</") else 1
        elif depth <= 0:
            parts[i] = pattern.sub(link, part)
    return "".join(parts)
