"""Every page a person reaches by following links, as its owner and as an admin, opens with
no script error, no console error (a Content-Security-Policy violation among them) and no
failed request; page_for's teardown fails the test on any. On the way: the empty chat's hint
changes once the first source is ready, and a long passage scrolls its highlighted sentence
into view."""

from __future__ import annotations

from urllib.parse import urljoin, urlparse

from django.contrib.auth import get_user_model

from library.models import Source
from notebooks.models import Notebook
from notebooks.tests.factories import make_source

from .helpers import create_notebook, stop_the_worker

# A chunk much taller than the passage box, the sentence the answer cites at its very end.
FILLER = " ".join(
    f"Survey line {n} lists the reeds, the rushes and the water mint along the bank."
    for n in range(1, 31)
)
CITED = "Bitterns boom in the reeds at dawn."
NOTES = f"{FILLER} {CITED}"
# Files rather than pages: a browser downloads them, so they are no page to check.
NOT_PAGES = (".png", ".csv", ".svg", ".mp3", ".json", "/logout/")

DROP = """([name, text]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], name, {type: "text/plain"}));
  const zone = document.querySelector(".dropzone");
  zone.dispatchEvent(
    new DragEvent("drop", {bubbles: true, cancelable: true, dataTransfer: transfer}));
}"""

HIGHLIGHT_IN_BOX = """() => {
  const box = document.querySelector("#passage .chunk-text");
  const mark = box.querySelector("mark");
  const outer = box.getBoundingClientRect(), inner = mark.getBoundingClientRect();
  return {scrolled: box.scrollTop, overflows: box.scrollHeight > box.clientHeight,
          inside: inner.top >= outer.top && inner.bottom <= outer.bottom};
}"""


def links(page, origin: str) -> set[str]:
    found = set()
    for href in page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)"):
        url = urljoin(page.url, href).split("#")[0]
        if urlparse(url).netloc == origin and not url.endswith(NOT_PAGES):
            found.add(url)
    return found


def visit_all(page, start: list[str], limit: int = 60) -> set[str]:
    """Every page reachable from `start` by links, each opened once; the pages seen."""
    origin = urlparse(page.url).netloc
    seen: set[str] = set()
    queue = [urljoin(page.url, path) for path in start]
    while queue and len(seen) < limit:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        response = page.goto(url)
        assert response is not None and response.status == 200, (url, response)
        page.wait_for_load_state("networkidle")
        queue.extend(sorted(links(page, origin) - seen))
    return seen


def test_every_page_opens_with_a_clean_console(page_for, live):
    page = page_for("petra")
    create_notebook(page, "Marsh")
    hint = page.locator("#chat .chat-empty")
    assert "Add a source first" in hint.inner_text()

    page.evaluate(DROP, ["marsh.txt", NOTES])
    page.wait_for_selector(".source .badge-ready", timeout=90_000)
    page.wait_for_function(
        "() => document.querySelector('#chat .chat-empty').textContent.includes('Ask a question')"
    )

    live.models.chat_replies.append(f"{CITED} [1]")
    page.fill("#question", "When do bitterns boom?")
    page.click(".ask-form button[type=submit]")
    page.locator("#chat .message-assistant a.cite").first.click()
    page.wait_for_selector("#passage .passage mark", timeout=30_000)
    page.wait_for_function(
        "() => document.querySelector('#passage .chunk-text').scrollTop > 0", timeout=5_000
    )
    placed = page.evaluate(HIGHLIGHT_IN_BOX)
    assert placed["overflows"] and placed["inside"], placed

    live.models.chat_replies.append('{"title": "Marsh report", "markdown": "Bitterns boom [1]."}')
    page.select_option("#studio-kind", "report")
    page.click(".studio-form button[type=submit]")
    page.wait_for_selector(".studio-document.source-ready", timeout=60_000)

    seen = visit_all(page, ["/notebooks/", "/library/", "/usage/", "/preferences/"])
    paths = {urlparse(url).path for url in seen}
    assert any("/citations/" in path for path in paths), paths
    assert any("/studio/" in path for path in paths), paths
    assert "/library/public/" in paths, paths

    admin = page_for()
    get_user_model().objects.create_superuser(username="ada", password="browser-pass-123")
    admin.goto("/admin/login/")
    admin.fill("#id_username", "ada")
    admin.fill("#id_password", "browser-pass-123")
    admin.click("input[type=submit]")
    admin.wait_for_url("**/admin/")
    visit_all(admin, ["/admin/", "/admin/library/source/", "/admin/notebooks/notebook/"], 15)
    # The jobs' pages (Procrastinate's admin wrote inline styles there).
    admin.goto("/admin/procrastinate/procrastinatejob/")
    admin.locator("#result_list th a").first.click()
    admin.wait_for_url("**/procrastinatejob/*/change/")


def test_a_polled_list_swaps_in_without_a_csp_error(page_for, live):
    """The sources list reloads itself while a source is read; an element of it that carries
    a style attribute (a browser extension, a resized box) must not make htmx set one."""
    stop_the_worker(live)
    page = page_for("paula")
    owner = get_user_model().objects.get(username="paula")
    notebook = Notebook.objects.create(owner=owner, title="Fens")
    source = make_source(owner=owner, notebook=notebook, title="Fen survey")
    Source.objects.filter(pk=source.pk).update(
        status=Source.Status.PROCESSING, stage="reading", progress_done=1, progress_total=9
    )
    page.goto(f"/notebooks/{notebook.pk}/")
    page.evaluate(
        """() => { for (const element of document.querySelectorAll("#sources [id]")) {
             element.style.color = "red"; element.style.color = ""; } }"""
    )
    assert page.locator("#sources [style]").count() > 0
    for _ in range(2):
        with page.expect_response(lambda response: "/sources/" in response.url):
            pass
    page.wait_for_timeout(300)  # the swap settles after its response
