"""Bar charts drawn on the server as SVG (no script, no inline style: the page's CSP holds):
what the template needs to place each bar, its label and the scale."""

from __future__ import annotations

from dataclasses import dataclass

WIDTH, HEIGHT = 640, 160
LEFT, BOTTOM, TOP = 36, 20, 8


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    y: float
    height: float
    part_y: float  # the highlighted part (refused questions) from here down
    part_height: float
    title: str  # the tooltip: the day and its figures


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    top: float  # the value of the scale's top line
    top_label: str
    labels: list[tuple[float, str]]  # (x, text) under some bars
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    base: int = HEIGHT - BOTTOM
    upper: int = TOP


def bar_chart(
    values: list[tuple[str, float, float, str]], *, unit: str = "", label_every: int = 7
) -> Chart:
    """Bars for (label, value, part of it highlighted, tooltip), left to right."""
    top = max((value for _label, value, _part, _tip in values), default=0) or 1
    span = HEIGHT - BOTTOM - TOP
    step = (WIDTH - LEFT) / max(len(values), 1)
    bars, labels = [], []
    for index, (label, value, part, tip) in enumerate(values):
        height = span * value / top
        part_height = span * part / top
        x = LEFT + index * step
        bars.append(
            Bar(
                x=round(x + step * 0.1, 1),
                width=round(step * 0.8, 1),
                y=round(HEIGHT - BOTTOM - height, 1),
                height=round(height, 1),
                part_y=round(HEIGHT - BOTTOM - part_height, 1),
                part_height=round(part_height, 1),
                title=tip,
            )
        )
        if index % label_every == 0 or index == len(values) - 1:
            labels.append((round(x + step / 2, 1), label))
    top_label = f"{top:g}{unit}"
    return Chart(bars=bars, top=top, top_label=top_label, labels=labels)
