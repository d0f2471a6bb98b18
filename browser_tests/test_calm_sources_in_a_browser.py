"""While a source is read the sources list reloads itself every 2 s: the progress changes in
place, and a summary or guide the reader opened stays open (no frame of it closed)."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from library.models import Source
from notebooks.models import Notebook, SourceGuide
from notebooks.tests.factories import make_source

from .conftest import SCREENSHOTS
from .helpers import stop_the_worker

# Counts every moment an opened summary or guide is shut, or replaced by a shut one.
WATCH_CLOSED = """() => {
  window.closedSeen = 0;
  new MutationObserver(() => {
    for (const id of window.openIds) {
      const details = document.getElementById(id);
      if (!details || !details.open) window.closedSeen += 1;
    }
  }).observe(document.body, {subtree: true, childList: true, attributes: true});
}"""


def polled(page, times: int = 1) -> None:
    for _ in range(times):
        with page.expect_response(lambda response: response.url.endswith("/sources/")):
            pass
    page.wait_for_timeout(200)  # swapped and settled


def test_progress_changes_in_place_and_what_the_reader_opened_stays_open(page_for, live):
    stop_the_worker(live)
    owner_page = page_for("rhea", viewport={"width": 1440, "height": 900})
    owner = get_user_model().objects.get(username="rhea")
    notebook = Notebook.objects.create(owner=owner, title="Estuary")
    ready = make_source(owner=owner, notebook=notebook, title="Tide tables")
    Source.objects.filter(pk=ready.pk).update(
        summary="High water comes twice a day.", summary_mode="extractive"
    )
    SourceGuide.objects.create(
        source=ready,
        mode="outline",
        topics=["Tides", "Mudflats"],
        questions=["When is high water?"],
    )
    busy = make_source(owner=owner, notebook=notebook, title="Survey of the mudflats")
    Source.objects.filter(pk=busy.pk).update(
        status=Source.Status.PROCESSING, stage="reading", progress_done=3, progress_total=40
    )

    for page, width in (
        (owner_page, 1440),
        (page_for("rhea", viewport={"width": 390, "height": 844}), 390),
    ):
        Source.objects.filter(pk=busy.pk).update(progress_done=3)
        page.goto(f"/notebooks/{notebook.pk}/#panel-sources")  # a phone opens at the chat
        page.click(f"#summary-{ready.pk} summary")
        page.click(f"#guide-{ready.pk} summary")
        page.evaluate(f"window.openIds = ['summary-{ready.pk}', 'guide-{ready.pk}']")
        page.evaluate(WATCH_CLOSED)
        assert "reading page 3 of 40" in page.locator(f"#source-{busy.pk}").inner_text()

        Source.objects.filter(pk=busy.pk).update(progress_done=17)
        polled(page, 2)
        assert "reading page 17 of 40" in page.locator(f"#source-{busy.pk}").inner_text()
        assert page.evaluate("window.closedSeen") == 0
        assert page.locator(f"#summary-{ready.pk}").evaluate("d => d.open")
        assert page.locator(f"#guide-{ready.pk}").evaluate("d => d.open")
        page.locator(f"#source-{ready.pk}").scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / f"sources-calm-while-reading-{width}.png")

    # Closed by the reader, it stays closed.
    page.click(f"#summary-{ready.pk} summary")
    page.evaluate("window.openIds = []")
    polled(page)
    assert not page.locator(f"#summary-{ready.pk}").evaluate("d => d.open")
    assert page.locator(f"#guide-{ready.pk}").evaluate("d => d.open")
