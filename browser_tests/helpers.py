"""What several browser tests share: a sample PDF, creating a notebook in the page, dropping
a file on the upload zone, finding what overflows a document's panel."""

from __future__ import annotations

import re

from ingest.tests.data import PDFS

FOUR_PAGES = PDFS / "sample-files" / "pdflatex-4-pages.pdf"


def create_notebook(page, title: str) -> int:
    page.fill("#notebook-title", title)
    page.click("text=Create notebook")
    page.wait_for_url(re.compile(r"/notebooks/\d+/$"))
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


DROP = """([name, text]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], name, {type: "text/plain"}));
  const zone = document.querySelector(".dropzone");
  zone.dispatchEvent(new DragEvent("dragover", {bubbles: true, dataTransfer: transfer}));
  zone.dispatchEvent(
    new DragEvent("drop", {bubbles: true, cancelable: true, dataTransfer: transfer}));
}"""


# Every element of the document's panel inside the panel, nothing scrolled or clipped inside
# an element, and no sideways scrolling of the page.
OVERFLOWS = """() => {
  const panel = document.querySelector(".document-body").getBoundingClientRect();
  const found = [];
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    found.push(`page ${document.documentElement.scrollWidth} > ${window.innerWidth}`);
  }
  for (const element of document.querySelectorAll(".document-body *")) {
    if (element.closest("svg, .visually-hidden")) continue;
    const box = element.getBoundingClientRect();
    const name = element.tagName + "." + element.className;
    if (box.width && (box.right > panel.right + 1 || box.left < panel.left - 1)) {
      found.push(`${name} sticks out: ${box.left}-${box.right} of ${panel.left}-${panel.right}`);
    }
    if (element.scrollWidth > element.clientWidth + 1 && element.clientWidth > 0) {
      found.push(`${name} scrolls: ${element.scrollWidth} > ${element.clientWidth}`);
    }
  }
  return found;
}"""


def stop_the_worker(live) -> None:
    """No worker until the next test (the live fixture starts one again): a source the test
    marked as being read stays so, instead of being queued again by the job upkeep."""
    worker = live.processes["worker"]
    worker.terminate()
    worker.wait(timeout=15)
