"""PDFium children (pdfium_text.py, pdfium_pages.py) started before there is a file for them.

A child's start and imports take longer than reading a short PDF or drawing a page. So a
process keeps children of each script started (as many as one use takes: a PDF's text is
read by several at once), their imports done, each waiting for its first line on its input
(what to read); whoever needs them takes them and leaves others waiting for the next use.
Each child still reads one file and ends: what a hostile file does to PDFium dies with it.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass
class Child:
    script: Path
    process: subprocess.Popen[Any]
    # What the child says on its standard error, for the log when it crashes.
    errors: IO[bytes]

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

    def waiting(self) -> Child | None:
        """The child that would be taken next, if any (tests)."""
        return self._children[0] if self._children else None
