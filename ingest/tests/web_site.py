"""A small web site on 127.0.0.1 for the web-source tests: a page, redirects (a loop, one
to a private address), a huge body, a slow one, a PDF, a text file and an image.

Each request is recorded in `server.seen` as (path, Host header).
"""

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ingest.tests.data import PDFS

ARTICLE = " ".join(
    f"The grey heron number {n} waits at the edge of the pond until a fish swims by."
    for n in range(40)
)
PAGE = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Herons of the Pond</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/shop">Shop</a></nav>
<article><h1>Herons of the Pond</h1><p>{ARTICLE}</p>
<p>Herons nest in colonies called heronries, high in the trees by the water.</p></article>
<footer>Copyright 2026 Pond Society. All rights reserved. Privacy policy.</footer>
</body></html>""".encode()
EMPTY_PAGE = b"<html><head><title>App</title></head><body><div id=root></div></body></html>"
NOTES = b"Field notes.\nThe heron waited at the pond for an hour before it caught a fish.\n"
with open(str(PDFS / "sample-files/pdflatex-4-pages.pdf"), "rb") as handle:
    FOUR_PAGES_PDF = handle.read()


class Handler(BaseHTTPRequestHandler):
    routes: dict = {}

    def do_GET(self):  # noqa: N802 - the name http.server calls
        self.server.seen.append((self.path, self.headers.get("Host")))  # type: ignore[attr-defined]
        route = self.routes.get(self.path.split("?", 1)[0])
        if route is None:
            self.send_error(404, "Not Found")
            return
        route(self)

    def log_message(self, format, *args):  # noqa: A002 - quiet test output
        pass

    def send_body(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.end_headers()

    def huge(self) -> None:
        # No Content-Length: the cap must hold while the body streams in.
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(200):
                self.wfile.write(b"<p>" + b"heron " * 2000 + b"</p>")

    def slow(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(100):  # a byte every 0.1 s: no single read ever times out
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.1)


Handler.routes = {
    "/page.html": lambda h: h.send_body(PAGE, "text/html; charset=utf-8"),
    "/empty.html": lambda h: h.send_body(EMPTY_PAGE, "text/html"),
    "/moved": lambda h: h.redirect("/page.html"),
    "/loop": lambda h: h.redirect("/loop"),
    "/to-private": lambda h: h.redirect("http://10.0.0.1/secret"),
    "/to-ftp": lambda h: h.redirect("ftp://127.0.0.1/file"),
    "/huge": Handler.huge,
    "/slow": Handler.slow,
    "/report": lambda h: h.send_body(FOUR_PAGES_PDF, "application/pdf"),
    "/notes.txt": lambda h: h.send_body(NOTES, "text/plain; charset=utf-8"),
    "/photo.png": lambda h: h.send_body(b"\x89PNG\r\n\x1a\n" + bytes(200), "image/png"),
}


class Site(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, str | None]]
    base: str
    server_names: list[str]  # TLS server names asked for, when a test wraps it in TLS


@contextlib.contextmanager
def running() -> Iterator[Site]:
    server = Site(("127.0.0.1", 0), Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    server.base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
