"""A PDFium child (pdfium_text.py, pdfium_pages.py) started before there is a file for it.

A child's start and imports take longer than reading a short PDF or drawing a page
(bench/README.md, note 1). So a process keeps one child of each script started, its imports
done, waiting for its first line on its input (what to read); whoever needs one takes it and
leaves another waiting for the next. Each child still reads one file and ends: what a hostile
file does to PDFium dies with it.
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
    """The one child of a script kept started in this process for its next use."""

    def __init__(self, *, text: bool) -> None:
        self._text = text
        self._lock = threading.Lock()
        self._child: Child | None = None

    def take(self, script: Path) -> Child:
        """The waiting child when it is alive and runs `script`; else a new one."""
        with self._lock:
            child, self._child = self._child, None
        if child is not None and child.process.poll() is None and child.script == script:
            return child
        if child is not None:  # never given a file: nothing of it is lost
            child.process.kill()
            child.end()
        return Child.start(script, text=self._text)

    def refill(self, script: Path) -> None:
        """Start a child of `script` to wait for the next use, unless one waits already."""
        with self._lock:
            if self._child is None:
                self._child = Child.start(script, text=self._text)

    def waiting(self) -> Child | None:
        """The child waiting now, if any (tests)."""
        return self._child
