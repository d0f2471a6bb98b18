"""Mind maps and infographics drawn as SVG from their data, on the server: no script, no
CDN, nothing loaded. Every text is escaped; the result is well-formed XML."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from django.utils.translation import gettext as _

from notebooks.markers import strip_markers

FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif"
PALETTE = ["#2563eb", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#65a30d"]


def _text(x: float, y: float, text: str, *, size: int = 13, **attributes: str) -> str:
    extra = "".join(
        f" {name.replace('_', '-')}={quoteattr(value)}" for name, value in attributes.items()
    )
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}"{extra}>{escape(text)}</text>'


# Glyph widths as a share of the font size, by kind of character, measured on DejaVu Sans
# (Debian's sans-serif, wider than most): a box sized by an average glyph overflows with
# capitals or a run of "m" and "w".
NARROW = set("iljtfrI.,;:!'|()[]/- ")
WIDE = set("mwMW@%")


def text_width(text: str, size: float) -> float:
    """About how wide `text` is drawn at `size` in a sans-serif font, rather more than less."""
    width = 0.0
    for char in text:
        if char in NARROW:
            width += 0.4
        elif char in WIDE:
            width += 1.0
        elif char.isupper():
            width += 0.75
        elif char.isdigit():
            width += 0.64
        else:
            width += 0.64
    return width * size


def wrapped(text: str, width: float, size: float) -> list[str]:
    """`text` in lines no wider than `width` at `size`, broken between words, and inside a
    word only when it alone is too wide."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        while text_width(word, size) > width:  # a path or a long compound: cut it
            cut = max(
                1, next(i for i in range(len(word), 0, -1) if text_width(word[:i], size) <= width)
            )
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:cut])
            word = word[cut:]
        candidate = f"{line} {word}".strip()
        if text_width(candidate, size) <= width:
            line = candidate
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines or [""]


def _document(width: float, height: float, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" font-family={quoteattr(FONT)}>'
        f"<title>{escape(title)}</title>" + "".join(body) + "</svg>"
    )


# Mind map: a tree from left to right; each leaf gets a row, a parent sits at the middle
# of its children, each level a column as wide as its longest label.
MAP_ROW = 34
MAP_GAP = 48
MAP_LABEL_WIDTH = 190  # a node's text at most this wide: long labels wrap


def mindmap_svg(data: dict[str, Any]) -> str:
    root = data["root"]
    columns: list[float] = []
    placed: list[tuple[dict[str, Any], int, float, list[str]]] = []  # node, depth, y, lines
    edges: list[tuple[int, int]] = []  # (parent index, child index)
    next_row = [0]

    def place(node: dict[str, Any], depth: int) -> int:
        size = 15 if depth == 0 else 13
        lines = wrapped(strip_markers(node["label"]), MAP_LABEL_WIDTH, size)
        width = max(text_width(line, size) for line in lines) + 20
        while len(columns) <= depth:
            columns.append(0.0)
        columns[depth] = max(columns[depth], width)
        index = len(placed)
        placed.append((node, depth, 0.0, lines))
        children = [place(child, depth + 1) for child in node["children"]]
        if children:
            y = (placed[children[0]][2] + placed[children[-1]][2]) / 2
        else:
            rows = max(1, len(lines))  # a wrapped label takes as many rows, centred on them
            y = (next_row[0] + rows / 2) * MAP_ROW + 10
            next_row[0] += rows
        placed[index] = (node, depth, y, lines)
        edges.extend((index, child) for child in children)
        return index

    place(root, 0)
    xs = [10.0]
    for width in columns[:-1]:
        xs.append(xs[-1] + width + MAP_GAP)
    total_width = xs[-1] + columns[-1] + 10
    total_height = next_row[0] * MAP_ROW + 20
    body: list[str] = []
    for parent, child in edges:
        _n, depth, y1, _l = placed[parent]
        _n2, depth2, y2, _l2 = placed[child]
        x1 = xs[depth] + columns[depth]
        x2 = xs[depth2]
        middle = (x1 + x2) / 2
        body.append(
            f'<path d="M{x1:.1f},{y1:.1f} C{middle:.1f},{y1:.1f} {middle:.1f},{y2:.1f} '
            f'{x2:.1f},{y2:.1f}" fill="none" stroke="#94a3b8" stroke-width="1.5"/>'
        )
    branch_colour: dict[int, str] = {}
    for index, (_node, depth, _y, _wrapped) in enumerate(placed):
        if depth == 1:
            branch_colour[index] = PALETTE[len(branch_colour) % len(PALETTE)]
    for parent, child in edges:  # a sub-topic takes its branch's colour
        if child not in branch_colour and parent in branch_colour:
            branch_colour[child] = branch_colour[parent]
    for index, (_node, depth, y, lines) in enumerate(placed):
        size = 15 if depth == 0 else 13
        height = len(lines) * (size + 4) + 10
        colour = "#0f172a" if depth == 0 else branch_colour.get(index, PALETTE[0])
        fill = colour if depth <= 1 else "#ffffff"
        ink = "#ffffff" if depth <= 1 else "#0f172a"
        body.append(
            f'<rect x="{xs[depth]:.1f}" y="{y - height / 2:.1f}" width="{columns[depth]:.1f}" '
            f'height="{height:.1f}" rx="8" fill="{fill}" stroke="{colour}" stroke-width="1.5"/>'
        )
        first = y - height / 2 + 5 + size
        for number, line in enumerate(lines):
            body.append(
                _text(xs[depth] + 10, first + number * (size + 4), line, size=size, fill=ink)
            )
    return _document(total_width, total_height, data["title"], body)


# Infographic: a column 760 wide: the title, cards of key figures, a vertical timeline,
# then one bar chart per comparison.
INFO_WIDTH = 760


def infographic_svg(data: dict[str, Any]) -> str:
    body: list[str] = []
    y = 20.0
    for line in wrapped(data["title"], INFO_WIDTH - 40, 22):
        y += 26
        body.append(_text(20, y, line, size=22, font_weight="bold", fill="#0f172a"))
    y += 16
    figures = data.get("figures") or []
    if figures:
        y = _figure_cards(body, figures, y)
    timeline = data.get("timeline") or []
    if timeline:
        y = _timeline(body, timeline, y)
    for comparison in data.get("comparisons") or []:
        y = _bar_chart(body, comparison, y)
    return _document(INFO_WIDTH, y + 10, data["title"], body)


def _figure_cards(body: list[str], figures: list[dict[str, Any]], y: float) -> float:
    """The figures as cards, three a row, added to `body` from `y`; where the next part starts."""
    card_width = (INFO_WIDTH - 40 - 2 * 16) / 3
    row_height = 0.0
    for index, figure in enumerate(figures):
        column = index % 3
        if column == 0 and index:
            y += row_height + 16
            row_height = 0
        x = 20 + column * (card_width + 16)
        label = wrapped(strip_markers(figure["label"]), card_width - 24, 12)[:5]
        height = 52 + len(label) * 16 + 12
        row_height = max(row_height, height)
        colour = PALETTE[index % len(PALETTE)]
        body.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{card_width:.1f}" height="{height:.1f}" '
            f'rx="10" fill="#f8fafc" stroke="{colour}" stroke-width="2"/>'
        )
        # A long value gets a smaller font rather than run out of its card.
        value_size = min(26, int((card_width - 24) / (text_width(figure["value"], 1) or 1)))
        body.append(
            _text(
                x + 12,
                y + 36,
                figure["value"],
                size=value_size,
                font_weight="bold",
                fill=colour,
            )
        )
        for number, line in enumerate(label):
            body.append(_text(x + 12, y + 60 + number * 16, line, size=12, fill="#334155"))
    y += row_height + 30
    return y


def _timeline(body: list[str], timeline: list[dict[str, Any]], y: float) -> float:
    """The dated events down a line, added to `body` from `y`; where the next part starts."""
    body.append(_text(20, y, _("Timeline"), size=16, font_weight="bold", fill="#0f172a"))
    y += 18
    top = y
    line_at = len(body)  # the line goes under the dots
    # The events start after the longest date ("2023-02-04 11:59:01 UTC"), 180 at least.
    dates_end = max(text_width(event["date"], 13) for event in timeline) + 56 + 16
    events_at = max(180.0, min(dates_end, INFO_WIDTH / 2))
    for index, event in enumerate(timeline):
        lines = wrapped(strip_markers(event["event"]), INFO_WIDTH - events_at - 20, 12)[:3]
        body.append(f'<circle cx="40" cy="{y + 10:.1f}" r="6" fill="{PALETTE[index % 7]}"/>')
        body.append(_text(56, y + 14, event["date"], size=13, font_weight="bold", fill="#0f172a"))
        for number, line in enumerate(lines):
            body.append(_text(events_at, y + 14 + number * 16, line, size=12, fill="#334155"))
        y += max(28, len(lines) * 16 + 12)
    body.insert(
        line_at,
        f'<line x1="40" y1="{top:.1f}" x2="40" y2="{y - 10:.1f}" stroke="#cbd5e1" '
        'stroke-width="2"/>',
    )
    y += 20
    return y


def _bar_chart(body: list[str], comparison: dict[str, Any], y: float) -> float:
    """One comparison's bars, added to `body` from `y`; where the next part starts."""
    unit = comparison.get("unit", "")
    body.append(
        _text(
            20,
            y,
            strip_markers(comparison["title"]),
            size=16,
            font_weight="bold",
            fill="#0f172a",
        )
    )
    y += 14
    largest = max((abs(item["value"]) for item in comparison["items"]), default=0) or 1
    for index, item in enumerate(comparison["items"]):
        width = 420 * abs(item["value"]) / largest
        body.append(_text(20, y + 15, item["label"][:28], size=12, fill="#334155"))
        body.append(
            f'<rect x="220" y="{y + 3:.1f}" width="{max(width, 1):.1f}" height="16" rx="3" '
            f'fill="{PALETTE[index % len(PALETTE)]}"/>'
        )
        shown = f"{item['value']:g} {unit}".strip()
        body.append(_text(226 + width, y + 15, shown, size=12, fill="#0f172a"))
        y += 24
    y += 20
    return y
