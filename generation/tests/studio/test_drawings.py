"""Mind maps and infographics are drawn as SVG on the server: well-formed XML, in the SVG
namespace, every label escaped, nothing that runs or loads."""

import re
import xml.etree.ElementTree as ET

from django.urls import reverse

from generation.documents.svg import infographic_svg, mindmap_svg
from generation.tests.studio.conftest import reply

SVG = "{http://www.w3.org/2000/svg}"
NASTY = 'Fish & <chips> "quoted" <script>alert(1)</script>'


def texts(root):
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def test_a_mind_map_is_valid_svg_with_every_label():
    data = {
        "title": NASTY,
        "root": {
            "label": "Root",
            "children": [
                {"label": NASTY, "children": [{"label": "Leaf one", "children": []}]},
                {"label": "A rather long label that has to wrap onto lines", "children": []},
            ],
        },
    }

    root = ET.fromstring(mindmap_svg(data))

    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}title").text == NASTY
    shown = " ".join(texts(root))
    assert "Root" in shown and "Leaf one" in shown and "Fish & <chips>" in shown
    assert root.find(f".//{SVG}script") is None
    assert len(root.findall(f"{SVG}path")) == 3  # one edge per child


def test_an_infographic_is_valid_svg_with_figures_timeline_and_bars():
    data = {
        "title": "In numbers",
        "figures": [{"value": "25 %", "label": NASTY + " [1]", "source": "[1]"}],
        "timeline": [
            {"date": "2016", "event": "Austria buys the sleepers", "source": "[2]"},
            {"date": "2019", "event": "1.4 million passengers", "source": "[2]"},
        ],
        "comparisons": [
            {
                "title": "Berths",
                "unit": "berths",
                "source": "[2]",
                "items": [{"label": "Couchette", "value": 6}, {"label": "Sleeper", "value": 3}],
            }
        ],
    }

    root = ET.fromstring(infographic_svg(data))

    shown = " ".join(texts(root))
    assert "25 %" in shown and "2016" in shown and "Couchette" in shown and "6 berths" in shown
    assert "[1]" not in shown  # markers are for the page's links, not the drawing
    bars = [rect for rect in root.iter(f"{SVG}rect") if rect.get("height") == "16"]
    assert [float(bar.get("width")) for bar in bars] == [420.0, 210.0]


def test_the_pages_inline_the_drawing_and_offer_it_as_a_download(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    fake_openai.chat_replies.append(
        reply(
            {
                "title": "Map",
                "root": {"label": NASTY, "children": [{"label": "Herons", "children": []}]},
            }
        )
    )
    document = make_document("mindmap")
    client.force_login(owner)

    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    download = client.get(reverse("studio:svg", args=[notebook.pk, document.pk]))

    assert '<svg xmlns="http://www.w3.org/2000/svg"' in page
    assert "<script>alert" not in page
    assert download["Content-Type"] == "image/svg+xml"
    ET.fromstring(download.content)


def test_mind_map_boxes_of_wrapped_labels_do_not_overlap():
    from generation.documents.svg import mindmap_svg

    long = "versioned binary dependency declaration mechanism of the package system"
    leaves = [{"label": label, "children": []} for label in ("binary packages", long, "Depends")]
    data = {
        "title": "M",
        "root": {"label": "Root", "children": [{"label": "B", "children": leaves}]},
    }

    drawn = mindmap_svg(data)

    boxes = sorted(
        (float(y), float(y) + float(height))
        for y, height in re.findall(
            r'<rect x="[\d.]+" y="([\d.-]+)" width="[\d.]+" height="([\d.]+)" '
            r'rx="8" fill="#ffffff"',
            drawn,
        )
    )
    assert len(boxes) == 3
    assert all(top >= bottom for (_t, bottom), (top, _b) in zip(boxes, boxes[1:], strict=False))


def test_an_infographic_event_starts_after_its_long_date():
    from generation.documents.svg import infographic_svg, text_width

    date = "2023-02-04 11:59:01 UTC"
    data = {
        "title": "T",
        "figures": [],
        "comparisons": [],
        "timeline": [{"date": date, "event": "The current version was built", "source": "[1]"}],
    }

    drawn = infographic_svg(data)

    date_x = float(re.search(r'<text x="([\d.]+)"[^>]*>' + re.escape(date), drawn).group(1))
    event_x = float(re.search(r'<text x="([\d.]+)"[^>]*>The current version', drawn).group(1))
    assert event_x >= date_x + text_width(date, 13)
