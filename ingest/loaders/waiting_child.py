"""PDFium children (pdfium_text.py, pdfium_pages.py) started before there is a file for them.

A child's start and imports take longer than reading a short PDF or drawing a page. So a
process keeps children of each script started (as many as one use takes: a PDF's text is
read by several at once), their imports done, each waiting for its first line on its input
(what to read); whoever needs them takes them and leaves others waiting for the next use.
Each child still reads one file and ends: what a hostile file does to PDFium dies with it.

A child left waiting longer than PDF_CHILD_IDLE_SECONDS is ended (a timer in this process
does it, under the same lock `take` holds, so a child is either taken or ended, never both):
an idle worker or web server keeps no PDFium processes for ever, and the next use starts one.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.conf import settings


@dataclass
class Child:
    script: Path
    process: subprocess.Popen[Any]
    # What the child says on its standard error, for the log when it crashes.
    errors: IO[bytes]
    # When it was started (time.monotonic()): how long it has waited for its file.
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def start(cls, script: Path, *, text: bool) -> Child:
        errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed in end())
        process = subprocess.Popen(
            [sys.executable, "-I", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=text,
        )
        return cls(script=script, process=process, errors=errors)

    def end(self) -> None:
        """Close its input (it finishes and exits), wait for it, close its pipes."""
        process = self.process
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        self.errors.close()


class WaitingChild:
    """The children of a script kept started in this process for their next use."""

    def __init__(self, *, text: bool) -> None:
        self._text = text
        self._lock = threading.Lock()
        self._children: list[Child] = []
        self._timer: threading.Timer | None = None

    def take(self, script: Path) -> Child:
        """A waiting child when one is alive and runs `script`; else a new one."""
        while True:
            with self._lock:
                child = self._children.pop(0) if self._children else None
            if child is None:
                return Child.start(script, text=self._text)
            if child.process.poll() is None and child.script == script:
                return child
            child.process.kill()  # never given a file: nothing of it is lost
            child.end()

    def refill(self, script: Path, *, count: int = 1) -> None:
        """Start children of `script` until `count` wait for the next use."""
        with self._lock:
            while len(self._children) < count:
                self._children.append(Child.start(script, text=self._text))
            self._end_idle_later()

    def waiting(self) -> Child | None:
        """The child that would be taken next, if any (tests)."""
        return self._children[0] if self._children else None

    def _end_idle_later(self) -> None:
        """Have the timer end the children once they have waited their time (under the lock)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._children:
            return
        oldest = min(child.started for child in self._children)
        delay = max(0.0, oldest + settings.PDF_CHILD_IDLE_SECONDS - time.monotonic())
        self._timer = threading.Timer(delay, self._end_idle)
        self._timer.daemon = True  # a process that exits does not wait for it
        self._timer.start()

    def _end_idle(self) -> None:
        limit = time.monotonic() - settings.PDF_CHILD_IDLE_SECONDS
        with self._lock:
            idle = [child for child in self._children if child.started <= limit]
            self._children = [child for child in self._children if child.started > limit]
            self._end_idle_later()
        for child in idle:
            child.end()  # its input closed, it exits without having read a file
