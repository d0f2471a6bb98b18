"""A stored file as a path on this machine, whichever storage holds it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db.models.fields.files import FieldFile


@contextmanager
def local_copy(file: FieldFile) -> Iterator[Path]:
    """The file itself on the filesystem storage; with S3 (S3_BUCKET) a temporary copy.

    The loaders, pypdfium2 and ffmpeg need a real path. A copy lives until the block ends;
    what a loader writes beside it (a converted recording) goes with it.
    """
    try:
        own_path: Path | None = Path(file.path)
    except NotImplementedError:  # remote storages (S3) have no path
        own_path = None
    # Some storages name a path where nothing lies (InMemoryStorage); those get a copy too.
    if own_path is not None and own_path.exists():
        yield own_path
        return
    with tempfile.TemporaryDirectory(prefix="loupe-") as folder:
        copy = Path(folder) / Path(file.name or "stored-file").name
        with file.open("rb") as stored, copy.open("wb") as out:
            shutil.copyfileobj(stored, out, 1024 * 1024)
        yield copy
