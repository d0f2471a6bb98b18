"""What a person who just ran `make run` needs to know, printed once the server answers:
where Loupe is, how to sign in, where that login is kept, how to get an admin, and whether
audio overviews can speak. The login page points at the same file on a local install."""

from __future__ import annotations

import socket
import subprocess
import textwrap
import time
from pathlib import Path

from django.conf import settings

DEMO_USERNAME = "demo"
# Inside the frame: an 80-column terminal shows it unbroken, unless a path is longer.
BOX_WIDTH = 76


def demo_login_file() -> Path:
    """Where `manage.py demo_user` keeps the demo user's password (readable by its owner only)."""
    return Path(settings.DATA_DIR) / "demo-login.txt"


def shown_path(path: Path) -> str:
    """The path as a person in the checkout would type it: relative when it is inside."""
    try:
        return str(path.resolve().relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(path)


def demo_login_hint() -> str:
    """The demo login's file for the login page; "" in production or when there is none, so a
    public site never says where a password lives."""
    if settings.PRODUCTION or not demo_login_file().exists():
        return ""
    return shown_path(demo_login_file())


def audio_status() -> str:
    from providers import tts

    try:
        english, other = str(tts.engine_name("en")), str(tts.engine_name("de"))
    except tts.SpeechUnavailable as exc:
        return f"off: {exc}"
    if english == other:
        return f"on: {english}"
    return f"on: {english} for English, {other} for other languages"


def address(host: str, port: int) -> str:
    # A server on every interface is reached on this machine through the loopback address.
    shown = "127.0.0.1" if host in {"0.0.0.0", "::", ""} else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def first_run_box(host: str, port: int, *, chat: str = "") -> str:
    login_file = demo_login_file()
    lines = [f"Loupe is running at {address(host, port)}   (Ctrl-C stops it)"]
    if host in {"0.0.0.0", "::"}:
        lines.append("  It listens on every interface: other machines use this one's address.")
    if login_file.exists() and not settings.PRODUCTION:
        password = login_file.read_text().strip()
        lines += [
            f"Sign in as:  {DEMO_USERNAME}   password: {password}",
            f"  The password is kept in {shown_path(login_file)} (make run prints it again).",
        ]
    else:
        lines.append("No demo user: create one with `.venv/bin/python manage.py demo_user`.")
    lines += [
        "An admin for /admin/:  make admin   (asks for a name and a password)",
        f"Audio overviews: {audio_status()}",
    ]
    if chat:
        lines.append(f"Chat model: {chat}")
    lines = [
        wrapped
        for line in lines
        for wrapped in textwrap.wrap(
            line, BOX_WIDTH, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
        )
    ]
    width = max(len(line) for line in lines)
    rule = "─" * (width + 2)
    return "\n".join([f"┌{rule}┐", *(f"│ {line.ljust(width)} │" for line in lines), f"└{rule}┘"])


def wait_until_listening(
    host: str, port: int, process: subprocess.Popen[bytes], seconds: float = 120
) -> bool:
    """Until the web server accepts connections (True), exits or takes too long (False)."""
    target = "127.0.0.1" if host in {"0.0.0.0", ""} else "::1" if host == "::" else host
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection((target, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False
